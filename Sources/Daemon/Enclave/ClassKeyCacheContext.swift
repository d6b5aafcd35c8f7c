import Crypto
import Foundation
import KeychainProtocol

/// What one keychain's entries in the kernel-keyring class-key cache (``ClassKeyCache``) are
/// named and sealed with, derived once per keychain identity: the key that seals each entry
/// (from the device secret and the keychain's identity, so it changes only when the keychain is
/// erased) and each class's entry name. Interpolating a name at every class-key lookup cost
/// 2,200 instructions, twice in every read (callgrind). A class, so that taking it from its lock
/// retains one object rather than its five fields.
final class ClassKeyCacheContext: Sendable {
    let keychainID: String
    /// Seals and opens this keychain's entries.
    let sealingKey: SymmetricKey
    private let whenUnlocked: String
    private let afterFirstUnlock: String
    private let whenPasscodeSet: String

    init(keychainID: String, deviceKey: SymmetricKey) {
        func name(_ protectionClass: ProtectionClass) -> String {
            "swift-keychain:\(keychainID):\(protectionClass.rawValue)"
        }
        self.keychainID = keychainID
        sealingKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, salt: Data(keychainID.utf8),
            info: Data("swift-keychain class-key-cache v1".utf8), outputByteCount: 32)
        whenUnlocked = name(.whenUnlocked)
        afterFirstUnlock = name(.afterFirstUnlock)
        whenPasscodeSet = name(.whenPasscodeSet)
    }

    /// The entry name of `protectionClass`'s key.
    func name(_ protectionClass: ProtectionClass) -> String {
        switch protectionClass {
        case .whenUnlocked: whenUnlocked
        case .afterFirstUnlock: afterFirstUnlock
        case .whenPasscodeSet: whenPasscodeSet
        }
    }
}
