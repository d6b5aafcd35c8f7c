import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The device secret: 32 random bytes in a file of mode 0600, standing in for the UID key that
/// Apple fuses into the Secure Enclave. Every key the keychain uses is derived from it, so a
/// copy of the database and keybag without it reveals nothing and cannot be brute-forced.
enum DeviceSecret {
    static let fileName = "device-secret"
    static let byteCount = 32

    /// Loads the device secret, creating it for a new keychain. A missing secret beside existing
    /// keychain state is an error, never a reason to make a new one: that would lose every item.
    ///
    /// - Parameters:
    ///   - otherStateExists: the keybag or a database with content is present.
    ///   - creating: a new keychain may be created.
    static func load(
        _ files: KeychainDirectory, otherStateExists: Bool, creating: Bool
    ) throws(KeychainError) -> SymmetricKey {
        if let bytes = try files.read(fileName) {
            guard bytes.count == byteCount else {
                throw KeychainError(
                    .errSecDecode,
                    "the device secret \(files.path(fileName)) is damaged (wrong length); the keychain cannot be "
                        + "opened; restore the file from a copy"
                )
            }
            return SymmetricKey(data: bytes)
        }
        guard !otherStateExists else {
            throw KeychainError(
                .errSecNotAvailable,
                "the device secret \(files.path(fileName)) is missing, so the existing keychain cannot be "
                    + "decrypted; restore the file from where it was, or erase the keychain with `keychainctl erase`"
            )
        }
        guard creating else {
            throw KeychainError(.errSecNoSuchKeychain, "no keychain exists at \(files.url.path) yet")
        }
        let key = SymmetricKey(size: .bits256)
        try files.writeAtomically(key.withUnsafeBytes { Data($0) }, to: fileName)
        return key
    }
}
