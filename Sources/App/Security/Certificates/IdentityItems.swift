import Foundation
import KeychainProtocol

/// `kSecClassIdentity` in the SecItem functions, as iOS keeps identities: a certificate item and
/// a private-key item, joined by the certificate's `kSecAttrPublicKeyHash` being the key's
/// `kSecAttrApplicationLabel`.
///
/// A query matches certificates by the certificate attributes it names and their keys by the
/// key-only ones (`kSecAttrApplicationTag`, `kSecAttrKeyType`, …); a certificate without its
/// private key in the keychain is no identity. What iOS returns for `kSecReturnData` and
/// `kSecReturnPersistentRef` of an identity is UNCONFIRMED: here the certificate's DER and its
/// item's persistent reference. `kSecReturnAttributes` gives the certificate's attributes with
/// `class` `idnt`.
enum IdentityItems {
    /// `SecItemAdd` of `kSecValueRef: identity`: the certificate, then its key (which may be
    /// there already); a key that cannot be added takes the certificate out again.
    static func add(_ attributes: CFDictionary) throws(KeychainError) -> CFTypeRef? {
        var entries = try dictionary(attributes)
        guard let identity = entries.removeValue(forKey: kSecValueRef as String) as? SecIdentity else {
            throw KeychainError(.errSecParam, "an identity is added as kSecValueRef: a SecIdentity")
        }
        entries.removeValue(forKey: kSecClass as String)
        var certificateItem = entries
        certificateItem[kSecValueRef as String] = identity.certificate
        var result: CFTypeRef?
        try check(SecItemAdd(certificateItem as NSDictionary, &result))
        var keyItem = entries.filter { shared.contains($0.key) }
        keyItem[kSecValueRef as String] = identity.privateKey
        let keyStatus = SecItemAdd(keyItem as NSDictionary, nil)
        if keyStatus != errSecSuccess && keyStatus != errSecDuplicateItem {
            SecItemDelete([kSecValueRef as String: identity.certificate] as NSDictionary)
            try check(keyStatus)
        }
        return result
    }

    /// `SecItemCopyMatching` of identities.
    static func copyMatching(_ query: CFDictionary) throws(KeychainError) -> CFTypeRef? {
        var entries = try dictionary(query)
        let returns = Returns(taking: &entries)
        let limit = entries.removeValue(forKey: kSecMatchLimit as String)
        let matches = try find(entries, limit: limit)
        guard returns.count > 0 else { return nil }
        let shaped = matches.map { returns.shape($0) }
        let returnsArray =
            (limit as? String) == (kSecMatchLimitAll as String) || ((limit as? NSNumber)?.intValue ?? 1) > 1
        return returnsArray ? NSArray(array: shaped) : shaped.first
    }

    /// `SecItemUpdate` of identities: their certificates' attributes.
    static func update(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) throws(KeychainError) {
        let matches = try find(try dictionary(query), limit: kSecMatchLimitAll)
        try check(
            SecItemUpdate(
                [
                    kSecClass as String: kSecClassCertificate,
                    kSecMatchItemList as String: matches.map(\.certificateReference),
                ] as NSDictionary, attributesToUpdate))
    }

    /// `SecItemDelete` of identities: each certificate and its private key.
    static func delete(_ query: CFDictionary) throws(KeychainError) {
        for match in try find(try dictionary(query), limit: kSecMatchLimitAll) {
            try check(
                SecItemDelete(
                    [
                        kSecClass as String: kSecClassCertificate,
                        kSecValuePersistentRef as String: match.certificateReference,
                    ] as NSDictionary))
            let keyStatus = SecItemDelete(
                [kSecClass as String: kSecClassKey, kSecValueRef as String: match.identity.privateKey] as NSDictionary)
            if keyStatus != errSecItemNotFound { try check(keyStatus) }
        }
    }

    // MARK: Matching

    /// One identity found: its certificate item and key.
    private struct Match {
        let identity: SecIdentity
        let certificateAttributes: [String: Any]
        let certificateReference: Data
    }

    /// The keys that go to the key half of a query; the rest go to the certificate's.
    private static let keyOnly: Set<String> = Set(ItemClass.key.attributes.keys).subtracting(
        ItemClass.certificate.attributes.keys)
    /// The keys both halves take: where they live and how a call authenticates.
    private static let shared: Set<String> = Set(
        [
            kSecAttrAccessGroup, kSecAttrAccessible, kSecAttrSynchronizable, kSecUseAuthenticationContext,
            kSecUseOperationPrompt, kSecUseAuthenticationUI, kSecUseNoAuthenticationUI, kSecUseDataProtectionKeychain,
        ].map { $0 as String })

    private static func find(_ query: [String: Any], limit: Any?) throws(KeychainError) -> [Match] {
        var certificateQuery = query.filter { !keyOnly.contains($0.key) }
        certificateQuery[kSecClass as String] = kSecClassCertificate
        if let identity = certificateQuery.removeValue(forKey: kSecValueRef as String) as? SecIdentity {
            certificateQuery[kSecValueRef as String] = identity.certificate
        }
        certificateQuery[kSecReturnAttributes as String] = true
        certificateQuery[kSecReturnRef as String] = true
        certificateQuery[kSecReturnPersistentRef as String] = true
        certificateQuery[kSecMatchLimit as String] = kSecMatchLimitAll
        var found: CFTypeRef?
        try check(SecItemCopyMatching(certificateQuery as NSDictionary, &found))
        let maximum =
            (limit as? String) == (kSecMatchLimitAll as String) ? Int.max : max((limit as? NSNumber)?.intValue ?? 1, 1)

        var keyQuery = query.filter { keyOnly.contains($0.key) || shared.contains($0.key) }
        keyQuery[kSecClass as String] = kSecClassKey
        keyQuery[kSecAttrKeyClass as String] = kSecAttrKeyClassPrivate
        keyQuery[kSecReturnRef as String] = true
        var matches: [Match] = []
        for case let certificateItem as [String: Any] in (found as? [Any]) ?? [] where matches.count < maximum {
            guard let certificate = certificateItem[kSecValueRef as String] as? SecCertificate,
                let reference = certificateItem[kSecValuePersistentRef as String] as? Data
            else { continue }
            keyQuery[kSecAttrApplicationLabel as String] = certificate.publicKeyHash
            var key: CFTypeRef?
            let status = SecItemCopyMatching(keyQuery as NSDictionary, &key)
            if status == errSecItemNotFound { continue }
            try check(status)
            guard let privateKey = key as? SecKey else { continue }
            matches.append(
                Match(
                    identity: SecIdentity(certificate: certificate, privateKey: privateKey),
                    certificateAttributes: certificateItem, certificateReference: reference))
        }
        guard !matches.isEmpty else {
            throw KeychainError(.errSecItemNotFound, "no certificate in the keychain has its private key there too")
        }
        return matches
    }

    /// What a query asked to have returned, and how each identity is shaped for it.
    private struct Returns {
        var reference = false
        var attributes = false
        var data = false
        var persistentReference = false

        init(taking entries: inout [String: Any]) {
            func take(_ key: CFString) -> Bool {
                (entries.removeValue(forKey: key as String) as? NSNumber)?.boolValue ?? false
            }
            reference = take(kSecReturnRef)
            attributes = take(kSecReturnAttributes)
            data = take(kSecReturnData)
            persistentReference = take(kSecReturnPersistentRef)
        }

        var count: Int { [reference, attributes, data, persistentReference].filter { $0 }.count }

        func shape(_ match: Match) -> AnyObject {
            let der = NSData(data: match.identity.certificate.der)
            let persistent = NSData(data: match.certificateReference)
            if count == 1 {
                if reference { return match.identity }
                if data { return der }
                if persistentReference { return persistent }
            }
            var entries: [String: AnyObject] = [:]
            if attributes {
                for (name, value) in match.certificateAttributes
                where name != kSecValueRef as String && name != kSecValuePersistentRef as String {
                    entries[name] = value as AnyObject
                }
                entries[kSecClass as String] = kSecClassIdentity
            }
            if reference { entries[kSecValueRef as String] = match.identity }
            if data { entries[kSecValueData as String] = der }
            if persistentReference { entries[kSecValuePersistentRef as String] = persistent }
            return NSDictionary(dictionary: entries)
        }
    }

    // MARK: Helpers

    private static func dictionary(_ dictionary: CFDictionary) throws(KeychainError) -> [String: Any] {
        guard let entries = dictionary as? [String: Any] else {
            throw KeychainError(.errSecParam, "a dictionary key is not a string; keys are kSec… constants")
        }
        return entries
    }

    private static func check(_ status: OSStatus) throws(KeychainError) {
        guard status != errSecSuccess else { return }
        throw KeychainError(failedStatus: status)
    }
}
