// The idiom of an app and its extensions sharing a secret through an app group: the group its
// com.apple.security.application-groups entitlement names, given as kSecAttrAccessGroup.
import Foundation
import Security

enum AppGroupStore {
    static let service = "com.example.shared-with-extensions"

    /// Stores `data` where every app of `group` finds it.
    static func share(_ data: Data, account: String, group: String) -> OSStatus {
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrAccessGroup as String: group,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            kSecValueData as String: data,
        ]
        return SecItemAdd(item as CFDictionary, nil)
    }

    /// What an app of `group` stored under `account`.
    static func read(account: String, group: String) -> Data? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrAccessGroup as String: group,
            kSecReturnData as String: true,
        ]
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }
}
