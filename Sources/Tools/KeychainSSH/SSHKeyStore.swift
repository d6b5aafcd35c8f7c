import Foundation
import Keychain

/// The SSH keys in the keychain: Enclave keys whose items carry the SSH tag and are labelled
/// with the key's name.
public enum SSHKeyStore {
    /// `kSecAttrApplicationTag` of every SSH key's item.
    static let tag = Data("com.swift-keychain.ssh".utf8)

    /// What a key's uses must satisfy, as `keychainctl ssh create --access-control` names it.
    public enum Protection: String, CaseIterable, Sendable {
        /// No prompt: the key signs whenever the keychain is unlocked.
        case none
        /// A touch or the passcode at each use.
        case userPresence
        /// A touch of any enrolled finger.
        case biometryAny
        /// A touch of a finger enrolled when the key was made.
        case biometryCurrentSet
        /// The passcode.
        case devicePasscode

        var flags: SecAccessControlCreateFlags {
            switch self {
            case .none: .privateKeyUsage
            case .userPresence: [.privateKeyUsage, .userPresence]
            case .biometryAny: [.privateKeyUsage, .biometryAny]
            case .biometryCurrentSet: [.privateKeyUsage, .biometryCurrentSet]
            case .devicePasscode: [.privateKeyUsage, .devicePasscode]
            }
        }
    }

    /// Makes a key named `name` inside the Enclave and keeps it.
    ///
    /// - Throws: errSecDuplicateItem when a key has that name; errSecParam for a name that is
    ///   empty or holds spaces or control characters (it ends an `authorized_keys` line).
    public static func create(name: String, protection: Protection) throws -> SSHEnclaveKey {
        guard !name.isEmpty,
            name.unicodeScalars.allSatisfy({
                !CharacterSet.whitespacesAndNewlines.contains($0) && !CharacterSet.controlCharacters.contains($0)
            })
        else {
            throw KeychainError(
                .errSecParam, "a key's name is one word without spaces (it ends the key's authorized_keys line)")
        }
        guard try find(name) == nil else {
            throw KeychainError(
                .errSecDuplicateItem, "an SSH key named \(name) exists; delete it first or choose another name")
        }
        var error: Unmanaged<CFError>?
        guard
            let access = SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, protection.flags, &error)
        else {
            throw keychainError(error)
        }
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecAttrKeySizeInBits as String: 256,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecPrivateKeyAttrs as String: [
                kSecAttrIsPermanent as String: true,
                kSecAttrApplicationTag as String: tag,
                kSecAttrLabel as String: name,
                kSecAttrAccessControl as String: access,
            ] as [String: Any],
        ]
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error),
            let made = SSHEnclaveKey(name: name, key: key)
        else {
            throw keychainError(error)
        }
        return made
    }

    /// A Security function's error as the keychain's: its status and description.
    static func keychainError(_ error: Unmanaged<CFError>?) -> KeychainError {
        guard let error = error?.takeRetainedValue() else { return KeychainError.errSecInternalComponent }
        return KeychainError(
            status: Int32(truncatingIfNeeded: CFErrorGetCode(error)),
            message: CFErrorCopyDescription(error) as String? ?? "the keychain refused")
    }

    /// Every SSH key, by name; each uses `context` (a new one per use when nil) and shows
    /// `reason` when it prompts.
    public static func all(context: LAContext? = nil, reason: String? = nil) throws -> [SSHEnclaveKey] {
        try matching(name: nil, context: context, reason: reason)
    }

    /// The key named `name`, if there is one.
    public static func find(_ name: String, context: LAContext? = nil, reason: String? = nil) throws -> SSHEnclaveKey? {
        try matching(name: name, context: context, reason: reason).first
    }

    /// Deletes the key named `name`.
    ///
    /// - Throws: errSecItemNotFound when there is none.
    public static func delete(_ name: String) throws {
        let status = SecItemDelete(
            [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecAttrLabel as String: name]
                as CFDictionary)
        guard status == errSecSuccess else {
            throw KeychainError(
                status: status,
                message: status == errSecItemNotFound ? "no SSH key is named \(name)" : "the key could not be deleted")
        }
        SSHForwardingPolicy.remove(for: name)
    }

    private static func matching(name: String?, context: LAContext?, reason: String?) throws -> [SSHEnclaveKey] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecReturnRef as String: true, kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        if let name { query[kSecAttrLabel as String] = name }
        if let context { query[kSecUseAuthenticationContext as String] = context }
        if let reason { query[kSecUseOperationPrompt as String] = reason }
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else {
            throw KeychainError(status: status, message: "the SSH keys could not be read")
        }
        return items.compactMap { item in
            guard let key = item[kSecValueRef as String] as? SecKey,
                let label = item[kSecAttrLabel as String] as? String
            else { return nil }
            return SSHEnclaveKey(name: label, key: key)
        }.sorted { $0.name < $1.name }
    }
}
