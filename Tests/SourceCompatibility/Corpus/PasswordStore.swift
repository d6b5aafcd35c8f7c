// Written as iOS code is, imports and all: a keychain wrapper in the style
// of the popular open-source ones (a service, an optional access group, data by key), built
// from `[String: AnyObject]` queries and `AnyObject?` results.
import Foundation
import Security

final class PasswordStore {
    let service: String
    let accessGroup: String?

    init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private func query(forKey key: String) -> [String: AnyObject] {
        var query: [String: AnyObject] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service as AnyObject,
            kSecAttrAccount as String: key as AnyObject,
        ]
        if let accessGroup = accessGroup {
            query[kSecAttrAccessGroup as String] = accessGroup as AnyObject
        }
        return query
    }

    @discardableResult
    func set(_ data: Data, forKey key: String) -> OSStatus {
        var attributes = query(forKey: key)
        attributes[kSecValueData as String] = data as AnyObject
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let changes: [String: AnyObject] = [kSecValueData as String: data as AnyObject]
            status = SecItemUpdate(query(forKey: key) as CFDictionary, changes as CFDictionary)
        }
        return status
    }

    func set(_ string: String, forKey key: String) -> Bool {
        guard let data = string.data(using: .utf8) else { return false }
        return set(data, forKey: key) == noErr
    }

    func data(forKey key: String) -> Data? {
        var search = query(forKey: key)
        search[kSecReturnData as String] = kCFBooleanTrue
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        guard status == noErr else { return nil }
        return result as? Data
    }

    func string(forKey key: String) -> String? {
        data(forKey: key).flatMap { String(data: $0, encoding: .utf8) }
    }

    func attributes(forKey key: String) -> [String: Any]? {
        var search = query(forKey: key)
        search[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: CFTypeRef?
        guard SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? [String: Any]
    }

    func allKeys() -> [String] {
        let search: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess,
              let items = result as? [[String: Any]] else { return [] }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    @discardableResult
    func removeObject(forKey key: String) -> Bool {
        SecItemDelete(query(forKey: key) as CFDictionary) == errSecSuccess
    }
}
