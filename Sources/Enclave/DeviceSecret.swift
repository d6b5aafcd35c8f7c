import Crypto
import Foundation
import KeychainProtocol

/// The device secret: 32 random bytes in a file of mode 0600, standing in for the UID key that
/// Apple fuses into the Secure Enclave. Every key the keychain uses is derived from it, so a
/// copy of the database and keybag without it reveals nothing and cannot be brute-forced.
enum DeviceSecret {
    static let byteCount = 32

    /// Loads the device secret, creating it when the keychain is new. A missing secret for an
    /// existing keybag is an error, never a reason to make a new one: that would lose every item.
    static func load(from url: URL, keybagExists: Bool) throws(KeychainError) -> SymmetricKey {
        if let bytes = try EnclaveFiles.read(url) {
            guard bytes.count == byteCount else {
                throw KeychainError(.errSecDecode, "the device secret \(url.path) is damaged (wrong length); the keychain cannot be opened")
            }
            return SymmetricKey(data: bytes)
        }
        guard !keybagExists else {
            throw KeychainError(.errSecNotAvailable, "the device secret \(url.path) is missing, so the existing keychain cannot be decrypted; restore the file from where it was, or move the keychain directory away to start a new one")
        }
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { Data($0) }
        try EnclaveFiles.writeAtomically(bytes, to: url)
        return key
    }
}
