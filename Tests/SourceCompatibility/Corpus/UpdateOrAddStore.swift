// The idiom of wrappers that build one dictionary for an item, data included, and pass it to
// SecItemUpdate as the query: errSecItemNotFound means "not there yet", and they add it.
import Foundation
import Security

enum UpdateOrAddStore {
    static func item(_ account: String, _ data: Data) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.example.update-or-add",
            kSecAttrAccount as String: account,
            kSecValueData as String: data,
        ]
    }

    /// Saves `data` under `account`: updates the item, or adds it when there is none.
    static func save(_ data: Data, account: String) -> OSStatus {
        let whole = item(account, data)
        let status = SecItemUpdate(whole as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        guard status == errSecItemNotFound else { return status }
        return SecItemAdd(whole as CFDictionary, nil)
    }

    static func read(_ account: String) -> Data? {
        var query = item(account, Data())
        query.removeValue(forKey: kSecValueData as String)
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }
}
