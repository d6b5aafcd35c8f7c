import Crypto
import Foundation
import KeychainProtocol

/// The keybag file: one wrapped key per protection class, the passcode parameters, and the
/// keychain's identity. It holds no key in clear: without a passcode each class key is sealed
/// by a key derived from the device secret alone; with one, by a key derived from the passcode
/// tangled with the device secret.
///
/// On-disk format version 1: JSON, mode 0600. A change of format raises `version`.
struct Keybag: Codable, Sendable {
    static let currentVersion = 1

    var version: Int
    /// Random identity of this keychain; a new one after an erase. Binds every wrap and the
    /// store's rows to this keybag.
    var keychainID: String
    /// Present while a device passcode is set.
    var passcode: PasscodeKDF?
    /// AES-GCM sealed class keys (`combined` form), by class.
    var wrappedClassKeys: [ProtectionClass: Data]
    /// Erase every item after 10 consecutive failed passcode attempts.
    var eraseAfterFailedAttempts: Bool

    /// A new keybag with fresh class keys and no passcode.
    static func fresh(deviceKey: SymmetricKey) throws(KeychainError) -> (Keybag, [ProtectionClass: SymmetricKey]) {
        var keybag = Keybag(
            version: currentVersion, keychainID: UUID().uuidString, passcode: nil, wrappedClassKeys: [:],
            eraseAfterFailedAttempts: false)
        let keys: [ProtectionClass: SymmetricKey] = [
            .whenUnlocked: SymmetricKey(size: .bits256), .afterFirstUnlock: SymmetricKey(size: .bits256),
        ]
        let unwrapped = keybag
        keybag.wrappedClassKeys = try unwrapped.wrapped(keys) { unwrapped.deviceWrappingKey(deviceKey, for: $0) }
        return (keybag, keys)
    }

    /// Seals each class key with the wrapping key `wrappingKey(class)` returns, for
    /// ``wrappedClassKeys``.
    func wrapped(
        _ keys: [ProtectionClass: SymmetricKey], with wrappingKey: (ProtectionClass) -> SymmetricKey
    ) throws(KeychainError) -> [ProtectionClass: Data] {
        var wrapped: [ProtectionClass: Data] = [:]
        for (protectionClass, key) in keys {
            do {
                let box = try key.withUnsafeBytes { bytes in
                    try AES.GCM.seal(bytes, using: wrappingKey(protectionClass), authenticating: associatedData(protectionClass))
                }
                guard let combined = box.combined else { throw KeychainError.errSecInternalComponent }
                wrapped[protectionClass] = combined
            } catch {
                throw KeychainError(.errSecInternalComponent, "cannot wrap the \(protectionClass) class key: \(error)")
            }
        }
        return wrapped
    }

    /// Opens the wrapped key of `protectionClass`; nil when the class has no key or the
    /// wrapping key is wrong (a wrong passcode).
    func unwrap(_ protectionClass: ProtectionClass, with wrappingKey: SymmetricKey) -> SymmetricKey? {
        guard let combined = wrappedClassKeys[protectionClass],
            let box = try? AES.GCM.SealedBox(combined: combined),
            var bytes = try? AES.GCM.open(box, using: wrappingKey, authenticating: associatedData(protectionClass))
        else { return nil }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        return SymmetricKey(data: bytes)
    }

    /// The key that wraps a class key when no passcode is set.
    func deviceWrappingKey(_ deviceKey: SymmetricKey, for protectionClass: ProtectionClass) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, salt: Data(keychainID.utf8),
            info: Data("swift-keychain class-wrap v1 device \(protectionClass.rawValue)".utf8), outputByteCount: 32)
    }

    /// The key that wraps a class key under the passcode key.
    func passcodeWrappingKey(_ passcodeKey: SymmetricKey, for protectionClass: ProtectionClass) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: passcodeKey, salt: Data(keychainID.utf8),
            info: Data("swift-keychain class-wrap v1 passcode \(protectionClass.rawValue)".utf8), outputByteCount: 32)
    }

    // AAD binds each wrapped key to its class and keychain, so keys cannot be swapped between
    // classes (a WhenUnlocked key posing as AfterFirstUnlock) or between keychains.
    private func associatedData(_ protectionClass: ProtectionClass) -> Data {
        Data("swift-keychain keybag v1 \(keychainID) \(protectionClass.rawValue)".utf8)
    }

    /// Reads and validates a keybag file.
    static func load(_ url: URL) throws(KeychainError) -> Keybag? {
        guard let data = try EnclaveFiles.read(url) else { return nil }
        guard let keybag = try? JSONDecoder().decode(Keybag.self, from: data), keybag.version == currentVersion else {
            throw KeychainError(.errSecDecode, "the keybag \(url.path) is damaged or of an unknown version; the keychain cannot be opened")
        }
        return keybag
    }

    /// Writes the keybag atomically.
    func save(_ url: URL) throws(KeychainError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { throw KeychainError(.errSecInternalComponent, "cannot encode the keybag") }
        try EnclaveFiles.writeAtomically(data, to: url)
    }
}
