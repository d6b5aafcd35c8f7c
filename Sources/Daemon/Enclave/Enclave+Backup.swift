import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// Backups as iOS makes encrypted ones (Apple Platform Security, "Keybags for Data Protection":
/// the backup keybag): items that may migrate go in under the backup password's key alone;
/// `…ThisDeviceOnly` items and items with an access control go in sealed again under a key
/// derived from this device's secret, so that they come back on this device only, as iOS keeps
/// non-migratory items wrapped with the UID-derived key. The secret of a device-only item
/// never leaves the Enclave in the clear: it is opened and sealed again here, whatever its
/// access control, which it keeps and which applies again once it is restored.
extension Enclave {
    /// A writer of a new backup under `password` (scrypt at ``BackupFile/limits``' floor, a
    /// fresh salt).
    public func makeBackupWriter(password: SecretBytes) throws(KeychainError) -> BackupWriter {
        let kdf = BackupFile.newKDF()
        return BackupWriter(keys: try BackupKeys(password: password, kdf: kdf), header: BackupHeader(kdf: kdf))
    }

    /// A reader of a backup under `password`.
    public func makeBackupReader(password: SecretBytes) -> BackupReader {
        BackupReader(password: password)
    }

    private var thisDeviceKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain backup v1 this device".utf8), outputByteCount: 32)
    }

    private static let thisDeviceLabel = Data("swift-keychain backup v1 this-device item".utf8)

    /// A device-only item's record: its class, attributes, secret and access control, sealed
    /// under this device's backup key. The access control is not evaluated: the secret stays
    /// sealed, and the control comes back with it.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the item's class is locked; `errSecParam`
    ///   for an item sealed under an app's password, which never leaves; `errSecDecode` for an
    ///   altered row.
    public func sealForThisDevice(
        _ item: SealedItem, binding: ItemBinding, attributes: Data
    ) throws(KeychainError) -> BackupRecord {
        guard binding.accessControl?.control.flags.contains(.applicationPassword) != true else {
            throw KeychainError(.errSecParam, "an item sealed under an app's password never leaves the keychain")
        }
        var secret = try openWithoutAccessControl(item, binding: binding)
        defer { secret.resetBytes(in: 0..<secret.count) }
        var body = BackupItem(
            itemClass: binding.itemClass, attributes: attributes, secret: SecretBytes(secret),
            accessControl: binding.accessControl?.encoded()
        ).encoded()
        defer { ProcessFiles.wipe(&body) }
        guard let sealed = try? AES.GCM.seal(body, using: thisDeviceKey, authenticating: Self.thisDeviceLabel).combined
        else { throw KeychainError(.errSecInternalComponent, "sealing a device-only item for a backup failed") }
        return .sealedToDevice(sealed)
    }

    /// The item a device-only record holds, when this device sealed it; nil when another did.
    public func openSealedForThisDevice(_ sealed: Data) -> BackupItem? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let opened = try? AES.GCM.open(box, using: thisDeviceKey, authenticating: Self.thisDeviceLabel)
        else { return nil }
        var body = Array(opened)
        defer { ProcessFiles.wipe(&body) }
        return BackupItem.decode(body)
    }
}
