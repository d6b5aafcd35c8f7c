import Foundation
import Security   // this package's module, with Apple's names only

let add: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: "com.example.chores",
    kSecAttrAccount as String: "alice",
    kSecValueData as String: Data("hunter2".utf8),
    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
]
var status = SecItemAdd(add as CFDictionary, nil)            // errSecSuccess, or errSecDuplicateItem

let query: [String: Any] = [
    kSecClass as String: kSecClassGenericPassword,
    kSecAttrService as String: "com.example.chores",
    kSecReturnData as String: true,
]
var result: CFTypeRef?
status = SecItemCopyMatching(query as CFDictionary, &result)  // errSecItemNotFound when absent
let password = (result as? Data).flatMap { String(data: $0, encoding: .utf8) }
print(password ?? "not found")
