import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The device secret sealed to a TPM (file `device-secret.tpm`), in place of the file of the
/// secret itself: the secret is in no file, so a copy of the keychain's files opens nothing
/// without this machine's TPM, and admits no offline guessing of the passcode.
///
/// Beside the sealed object: the NV index of the keychain's rollback counter
/// (``RollbackCounter``) and, once the database was first bound, the counter's value less the
/// database's generation. Those fields are authenticated with a key derived from the secret,
/// checked once it is unsealed.
///
/// Layout: `KCTPMDS1`, the NV index (4 bytes), 1 and the offset (8 bytes, two's complement)
/// or 0 and 8 zero bytes, the sealed object's length (2 bytes) and bytes, then HMAC-SHA256 of
/// all before it.
struct SealedDeviceSecret: Sendable {
    static let fileName = "device-secret.tpm"
    private static let magic = Data("KCTPMDS1".utf8)

    /// The sealed object, as ``TrustedPlatformModule/seal(_:)`` wrote it.
    var blob: Data
    /// The NV index of the keychain's counter.
    var counterIndex: UInt32
    /// The counter's value less the database's generation; nil until the first bind.
    var counterOffset: Int64?

    /// The file's bytes, authenticated under `deviceKey`.
    func encoded(_ deviceKey: SymmetricKey) -> Data {
        var writer = WireWriter()
        writer.u32(counterIndex)
        writer.bool(counterOffset != nil)
        writer.i64(counterOffset ?? 0)
        var bytes = Self.magic + Data(writer.finish())
        bytes.append(UInt8(blob.count >> 8))
        bytes.append(UInt8(blob.count & 0xFF))
        bytes.append(blob)
        bytes.append(contentsOf: HMAC<SHA256>.authenticationCode(for: bytes, using: Self.key(deviceKey)))
        return bytes
    }

    private static func key(_ deviceKey: SymmetricKey) -> SymmetricKey {
        AuthenticatedState.key(for: fileName, deviceKey: deviceKey)
    }

    /// Reads the file, unseals the secret with `tpm`, then checks the fields with it.
    ///
    /// - Throws: `errSecDecode` when the file is malformed or altered, or the object does not
    ///   unseal on this TPM (another machine's files, or this TPM was cleared).
    static func open(
        _ bytes: Data, path: String, with tpm: TrustedPlatformModule
    ) throws(KeychainError) -> (SealedDeviceSecret, SymmetricKey) {
        let bytes = Data(bytes)
        let altered = KeychainError(
            .errSecDecode, "\(path) was altered or damaged; the keychain cannot be opened. Restore it from a copy")
        let fixed = magic.count + 4 + 1 + 8 + 2
        guard bytes.count > fixed + 32, bytes.prefix(magic.count) == magic else { throw altered }
        let field = { (offset: Int, count: Int) in
            bytes[(magic.count + offset)..<(magic.count + offset + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        let length = Int(field(13, 2))
        guard bytes.count == fixed + length + 32, bytes[magic.count + 4] <= 1 else { throw altered }
        let blob = bytes[fixed..<(fixed + length)]
        let deviceKey: SymmetricKey
        do {
            deviceKey = try tpm.unseal(Data(blob))
        } catch {
            throw KeychainError(
                .errSecDecode,
                "the device secret in \(path) does not unseal on this machine's TPM (\(tpm.tcti)): these files were "
                    + "copied from another machine, or this TPM was cleared since (a TPM clear in the firmware, a "
                    + "new motherboard). Nothing was changed; without that TPM the keychain cannot be opened: restore "
                    + "a backup (Docs/Backup.md) into a new keychain. \(error.message)")
        }
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                bytes.suffix(32), authenticating: bytes.dropLast(32), using: key(deviceKey))
        else { throw altered }
        let sealed = SealedDeviceSecret(
            blob: Data(blob), counterIndex: UInt32(field(0, 4)),
            counterOffset: bytes[magic.count + 4] == 1 ? Int64(bitPattern: field(5, 8)) : nil)
        return (sealed, deviceKey)
    }
}
