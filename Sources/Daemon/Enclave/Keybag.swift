import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The keybag file: one wrapped key per protection class, the passcode parameters, the
/// keychain's identity, and what the keybag knows of its database. It holds no key in clear:
/// without a passcode each class key is sealed by a key derived from the device secret alone;
/// with one, by a key derived from the passcode tangled with the device secret. Every field is
/// authenticated (``AuthenticatedState``), so none can be edited, downgraded or copied from
/// another keychain.
///
/// On-disk format version 2 (`swift-keychain keybag v2`). Version 1, written by development
/// builds before 2026-11, was not authenticated and is refused with `errSecDecode`.
struct Keybag: Codable, Sendable {
    static let fileName = "keybag"
    static let version = 2

    /// Random identity of this keychain; a new one after an erase. Binds every wrap and the
    /// store's rows to this keybag.
    var keychainID: String
    /// Present while a device passcode is set.
    var passcode: PasscodeKDF?
    /// AES-GCM sealed class keys (`combined` form), by class.
    var wrappedClassKeys: [ProtectionClass: Data]
    /// Erase every item after 10 consecutive failed passcode attempts.
    var eraseAfterFailedAttempts: Bool
    /// True once `keychain.db` was created and stamped with ``keychainID``: from then on a
    /// missing or empty database is an error, never a new keychain.
    var databaseCreated: Bool
    /// Set by an erase: the identity of the erased keychain, whose rows the database still holds
    /// until the server deletes them. The only way rows are ever deleted wholesale.
    var erasedKeychainID: String?
    /// True when the database carries a row ledger (``Enclave/rowLedgerRequired()``): a keybag
    /// made since ledgers exist says so from the start; one made before (the field absent)
    /// says so after the ledger's first write. A database without its ledger is then refused.
    var rowLedger: Bool?

    /// A new keybag with fresh class keys and no passcode.
    ///
    /// - Parameters:
    ///   - databaseCreated: false for a new keychain; true after an erase, whose database exists.
    ///   - erasedKeychainID: the keychain an erase replaces.
    static func fresh(
        deviceKey: SymmetricKey, databaseCreated: Bool = false, erasedKeychainID: String? = nil
    ) throws(KeychainError) -> Keybag {
        var keybag = Keybag(
            keychainID: UUID().uuidString, passcode: nil, wrappedClassKeys: [:], eraseAfterFailedAttempts: false,
            databaseCreated: databaseCreated, erasedKeychainID: erasedKeychainID, rowLedger: true)
        let keys: [ProtectionClass: SymmetricKey] = [
            .whenUnlocked: SymmetricKey(size: .bits256), .afterFirstUnlock: SymmetricKey(size: .bits256),
        ]
        let unwrapped = keybag
        keybag.wrappedClassKeys = try unwrapped.wrapped(keys) { unwrapped.deviceWrappingKey(deviceKey, for: $0) }
        return keybag
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
                    try AES.GCM.seal(
                        bytes, using: wrappingKey(protectionClass), authenticating: associatedData(protectionClass))
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

    /// Reads and authenticates the keybag; nil when there is none.
    ///
    /// - Throws: `errSecDecode` when it was altered, belongs with another device secret, or asks
    ///   for passcode parameters outside `limits`.
    static func load(
        _ files: KeychainDirectory, deviceKey: SymmetricKey, limits: PasscodeKDF.Limits
    ) throws(KeychainError) -> Keybag? {
        guard let data = try files.read(fileName) else { return nil }
        let keybag = try AuthenticatedState.decode(
            data, as: Keybag.self, name: fileName, version: version, deviceKey: deviceKey, path: files.path(fileName))
        try keybag.passcode?.validate(limits)
        return keybag
    }

    /// Writes the keybag atomically.
    func save(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) {
        try files.writeAtomically(
            AuthenticatedState.encode(self, name: Self.fileName, version: Self.version, deviceKey: deviceKey),
            to: Self.fileName)
    }
}
