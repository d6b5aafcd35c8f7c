import Foundation
import KeychainClient
import KeychainProtocol

// Apple's SecItem functions, with Apple's signatures and status codes. Code written for iOS in
// the usual style compiles unchanged:
//
//     var result: CFTypeRef?
//     let status = SecItemCopyMatching(query as CFDictionary, &result)
//     if status == errSecSuccess, let data = result as? Data { … }

/// Adds an item to the keychain.
///
/// As on iOS, nothing is returned unless the dictionary asks with a `kSecReturn…` key.
///
/// - Returns: `errSecSuccess`, `errSecDuplicateItem` (-25299) when an item with the same
///   primary key exists, `errSecParam` (-50) for a malformed dictionary, `errSecDataTooLarge`
///   (-25302) over 1 MiB, `errSecInteractionNotAllowed` (-25308) when the keychain is locked.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1401659-secitemadd>
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return status { () throws(KeychainError) in
        var dictionary = try SecItemDictionary(attributes)
        if dictionary.namesIdentity {
            // Not `result?.pointee = try …`: with no result pointer that skips the add itself.
            let added = try IdentityItems.add(attributes)
            result?.pointee = added
            return
        }
        let item = try dictionary.newItem()
        let reply = try AuthenticatedCall.perform(dictionary.authentication) { KeychainRequest.add(item).with($0) }
        guard case .items(let items) = reply else { return }
        if !item.returns.isEmpty { result?.pointee = ResultShape.value(items, dictionary.requested, limit: .one) }
    }
}

/// Returns one or more items that match a search query.
///
/// The default limit is one match; `kSecMatchLimitAll` or a number returns an array. One
/// `kSecReturn…` key returns that value; several return a dictionary per item. `kSecReturnData`
/// with `kSecMatchLimitAll` is allowed, as on iOS.
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound` (-25300), `errSecParam` (-50),
///   `errSecInteractionNotAllowed` (-25308) when a match is locked.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1398306-secitemcopymatching>
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return status { () throws(KeychainError) in
        var dictionary = try SecItemDictionary(query)
        if dictionary.namesIdentity {
            let found = try IdentityItems.copyMatching(query)
            result?.pointee = found
            return
        }
        let parsed = try dictionary.query()
        let reply = try AuthenticatedCall.perform(dictionary.authentication) { .copyMatching(parsed.with($0)) }
        guard case .items(let items) = reply else { return }
        var requested = dictionary.requested
        requested.authentication = dictionary.authentication
        if !parsed.returns.isEmpty { result?.pointee = ResultShape.value(items, requested, limit: parsed.limit) }
    }
}

/// Modifies every item that matches a search query.
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound` (-25300), `errSecDuplicateItem` (-25299)
///   when the change makes two items clash, `errSecParam` (-50) for search or return keys in
///   `attributesToUpdate` or read-only attributes.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1393617-secitemupdate>
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    status { () throws(KeychainError) in
        var queryDictionary = try SecItemDictionary(query)
        if queryDictionary.namesIdentity { return try IdentityItems.update(query, attributesToUpdate) }
        let parsed = try queryDictionary.query(for: .update)
        var changesDictionary = try SecItemDictionary(attributesToUpdate)
        let changes = try changesDictionary.changes(for: parsed.itemClass)
        _ = try AuthenticatedCall.perform(queryDictionary.authentication) { .update(parsed.with($0), changes) }
    }
}

/// Deletes every item that matches a search query.
///
/// - Returns: `errSecSuccess`, `errSecItemNotFound` (-25300) when nothing matched.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1395547-secitemdelete>
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    status { () throws(KeychainError) in
        var dictionary = try SecItemDictionary(query)
        if dictionary.namesIdentity { return try IdentityItems.delete(query) }
        _ = try ProcessKeychain.perform(.delete(try dictionary.query(for: .delete)))
    }
}

extension ItemQuery {
    /// This query carrying `material`.
    func with(_ material: AuthenticationMaterial) -> ItemQuery {
        var query = self
        query.authenticationContext = material.context
        query.applicationPassword = material.applicationPassword
        return query
    }
}

private func status(_ body: () throws(KeychainError) -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch {
        return error.status
    }
}
