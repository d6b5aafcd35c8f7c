// The idiom of wrappers that store every key as Data in kSecAttrAccount (SwiftKeychainWrapper
// encodes its keys with `key.data(using: .utf8)`) and read them back with `as? Data`.
import Foundation
import Security

struct DataKeyedStore {
    let serviceName: String

    private func query(forKey key: String) -> [String: Any] {
        let encodedKey = key.data(using: String.Encoding.utf8)
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword]
        query[kSecAttrService as String] = serviceName
        query[kSecAttrGeneric as String] = encodedKey
        query[kSecAttrAccount as String] = encodedKey
        return query
    }

    @discardableResult
    func set(_ value: String, forKey key: String) -> Bool {
        var query = query(forKey: key)
        query[kSecValueData as String] = value.data(using: .utf8)
        query[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
        let status: OSStatus = SecItemAdd(query as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let update: [String: Any] = [kSecValueData as String: value.data(using: .utf8)!]
            return SecItemUpdate(self.query(forKey: key) as CFDictionary, update as CFDictionary) == errSecSuccess
        }
        return status == errSecSuccess
    }

    func string(forKey key: String) -> String? {
        var query = query(forKey: key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == noErr, let data = result as? Data else { return nil }
        return String(data: data, encoding: .utf8)
    }

    func allKeys() -> Set<String> {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: serviceName,
            kSecReturnAttributes as String: kCFBooleanTrue!, kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return [] }
        var keys = Set<String>()
        for attributes in result as? [[AnyHashable: Any]] ?? [] {
            if let accountData = attributes[kSecAttrAccount] as? Data,
                let key = String(data: accountData, encoding: .utf8)
            {
                keys.insert(key)
            }
        }
        return keys
    }
}
