// The idiom of code that keeps a persistent reference to an iCloud Keychain item (one added with
// kSecAttrSynchronizable) and reads the item back by that reference alone.
import Foundation
import Security

enum SynchronizedReference {
    static func storeAndReadBack() -> Data? {
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.example.synchronized",
            kSecAttrAccount as String: "me",
            kSecAttrSynchronizable as String: kCFBooleanTrue!,
            kSecValueData as String: Data("synced".utf8),
            kSecReturnPersistentRef as String: kCFBooleanTrue!,
        ]
        var added: CFTypeRef?
        guard SecItemAdd(attributes as CFDictionary, &added) == errSecSuccess, let reference = added as? Data
        else { return nil }
        let query: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }

    /// A wrapper's "synchronizable, but this device only" item, as its iOS test expects: stored,
    /// and found again as synchronizable.
    static func storeSynchronizableThisDeviceOnly() -> Bool {
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.example.synchronized",
            kSecAttrAccount as String: "this-device",
            kSecAttrSynchronizable as String: true,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecValueData as String: Data("kept here".utf8),
        ]
        guard SecItemAdd(item as CFDictionary, nil) == errSecSuccess else { return false }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.example.synchronized",
            kSecAttrAccount as String: "this-device",
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            kSecReturnAttributes as String: true,
        ]
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess,
            let attributes = result as? [String: Any]
        else { return false }
        return attributes[kSecAttrSynchronizable as String] as? Bool == true
    }
}
