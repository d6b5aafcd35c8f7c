import Foundation
import Keychain

/// The SecItem calls the benchmarks time, as an app makes them. Each checks its answer, so that
/// a smoke run (``Scale/smoke``) tests the keychain as well as timing it.
enum ItemOperations {
    static func query(account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench",
            kSecAttrAccount as String: account,
        ]
        .merging(extra) { $1 }
    }

    /// One item's secret, by service and account.
    static func read(_ index: Int) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(
            query(account: "account-\(index)", [kSecReturnData as String: true]) as CFDictionary, &result)
        precondition(status == errSecSuccess, "read: \(status)")
        precondition(result as? Data == Data("secret-\(index)".utf8), "read returned another secret")
    }

    /// A read of an account that is not there.
    static func miss(_ index: Int) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(
            query(account: "absent-\(index)", [kSecReturnData as String: true]) as CFDictionary, &result)
        precondition(status == errSecItemNotFound, "miss: \(status)")
    }

    /// A new item, in service `bench-added` (``removeAdded()`` takes them out again).
    static func add(_ account: String) {
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench-added",
            kSecAttrAccount as String: account, kSecValueData as String: Data("added-secret".utf8),
        ]
        let status = SecItemAdd(attributes as CFDictionary, nil)
        precondition(status == errSecSuccess, "add: \(status)")
    }

    /// Deletes one item added by ``add(_:)``.
    static func delete(_ account: String) {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench-added",
            kSecAttrAccount as String: account,
        ]
        let status = SecItemDelete(query as CFDictionary)
        precondition(status == errSecSuccess, "delete: \(status)")
    }

    /// Every item ``add(_:)`` made.
    static func removeAdded() {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench-added",
        ]
        let status = SecItemDelete(query as CFDictionary)
        precondition(status == errSecSuccess || status == errSecItemNotFound, "removing added items: \(status)")
    }

    /// Writes an item's secret anew (the same secret, so that reads keep their answer).
    static func update(_ index: Int) {
        let changes: [String: Any] = [kSecValueData as String: Data("secret-\(index)".utf8)]
        let status = SecItemUpdate(query(account: "account-\(index)") as CFDictionary, changes as CFDictionary)
        precondition(status == errSecSuccess, "update: \(status)")
    }

    /// The attributes of the 100 items in service `bench-query`: the keychain's call, whose
    /// result is an `NSArray` of 100 `NSDictionary`, as on iOS.
    @discardableResult
    static func query100() -> CFTypeRef? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench-query",
            kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        precondition(status == errSecSuccess, "query: \(status)")
        precondition((result as? NSArray)?.count == Fixture.queryItems, "query returned another number of items")
        return result
    }

    /// The caller's side of ``query100()``: `result as? [[String: Any]]`, as an app ported from
    /// iOS writes it. Foundation on Linux converts every dictionary at once, through
    /// `[AnyHashable: Any]` and then `[String: Any]`; Apple's bridges lazily.
    static func bridge(_ result: CFTypeRef?) {
        guard let items = result as? [[String: Any]], items.count == Fixture.queryItems,
            items.allSatisfy({ $0[kSecAttrService as String] as? String == "bench-query" })
        else { preconditionFailure("the query's result did not bridge to 100 items of service bench-query") }
    }
}
