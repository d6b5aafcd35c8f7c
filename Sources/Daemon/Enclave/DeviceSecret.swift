import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The device secret: 32 random bytes standing in for the UID key that Apple fuses into the
/// Secure Enclave. Every key the keychain uses is derived from it, so a copy of the database and
/// keybag without it reveals nothing and cannot be brute-forced.
///
/// Without a TPM it is a file of mode 0600 (`device-secret`). With one, it is sealed to the TPM
/// (`device-secret.tpm`, ``SealedDeviceSecret``) and in no file at all, and the keychain gets a
/// rollback counter in the TPM (``RollbackCounter``). A keychain whose secret is a file moves
/// to the TPM the first time it opens with one: sealed first, the file removed after.
enum DeviceSecret {
    static let fileName = "device-secret"
    static let byteCount = 32

    /// Loads the device secret, creating it for a new keychain. A missing secret beside existing
    /// keychain state is an error, never a reason to make a new one: that would lose every item.
    ///
    /// - Parameters:
    ///   - otherStateExists: the keybag or a database with content is present.
    ///   - creating: a new keychain may be created.
    ///   - tpm: the TPM to seal the secret to; nil keeps it in a file.
    /// - Returns: the secret, and the rollback counter when a TPM seals it.
    static func load(
        _ files: KeychainDirectory, otherStateExists: Bool, creating: Bool, tpm: TrustedPlatformModule?
    ) throws(KeychainError) -> (key: SymmetricKey, counter: RollbackCounter?) {
        if let bytes = try files.read(SealedDeviceSecret.fileName) {
            guard let tpm else {
                throw KeychainError(
                    .errSecNotAvailable,
                    "the device secret \(files.path(SealedDeviceSecret.fileName)) is sealed to a TPM, and this "
                        + "keychain was opened without one: start keychaind with the TPM it was sealed to "
                        + "(`keychaind --tpm`)")
            }
            let (sealed, key) = try SealedDeviceSecret.open(
                bytes, path: files.path(SealedDeviceSecret.fileName), with: tpm)
            // A move to the TPM that stopped after sealing leaves the file: it goes now.
            try files.remove(fileName)
            return (key, RollbackCounter(tpm: tpm, sealed: sealed, files: files, deviceKey: key))
        }
        let key: SymmetricKey
        if let bytes = try files.read(fileName) {
            guard bytes.count == byteCount else {
                throw KeychainError(
                    .errSecDecode,
                    "the device secret \(files.path(fileName)) is damaged (wrong length); the keychain cannot be "
                        + "opened; restore the file from a copy"
                )
            }
            key = SymmetricKey(data: bytes)
        } else {
            guard !otherStateExists else {
                throw KeychainError(
                    .errSecNotAvailable,
                    "the device secret \(files.path(fileName)) is missing, so the existing keychain cannot be "
                        + "decrypted; restore the file from where it was, or erase the keychain with "
                        + "`keychainctl erase`")
            }
            guard creating else {
                throw KeychainError(.errSecNoSuchKeychain, "no keychain exists at \(files.url.path) yet")
            }
            key = SymmetricKey(size: .bits256)
            if let tpm { return (key, try seal(key, files, tpm)) }
            try files.writeAtomically(key.withUnsafeBytes { Data($0) }, to: fileName)
            return (key, nil)
        }
        guard let tpm else { return (key, nil) }
        return (key, try seal(key, files, tpm))
    }

    /// Seals `key` to `tpm` with a new rollback counter, writes `device-secret.tpm`, then removes
    /// the file of the secret.
    private static func seal(
        _ key: SymmetricKey, _ files: KeychainDirectory, _ tpm: TrustedPlatformModule
    ) throws(KeychainError) -> RollbackCounter {
        let sealed = SealedDeviceSecret(
            blob: try tpm.seal(key), counterIndex: try RollbackCounter.define(tpm, deviceKey: key), counterOffset: nil)
        try files.writeAtomically(sealed.encoded(key), to: SealedDeviceSecret.fileName)
        try files.remove(fileName)
        return RollbackCounter(tpm: tpm, sealed: sealed, files: files, deviceKey: key)
    }
}
