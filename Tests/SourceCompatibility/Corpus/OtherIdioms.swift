// Other idioms of iOS keychain code, each as it is written there: access control objects with
// `Unmanaged<CFError>` out-parameters, `[String: AnyHashable]` and `NSMutableDictionary`
// queries, optional keys, CFError accessors, random bytes, shared web credentials and error
// messages.
import Foundation
import LocalAuthentication
import Security

enum OtherIdioms {
    /// The KeychainTouchID sample's access control, kept in a `[String: AnyHashable]` query.
    static func protectedItemQuery() -> [String: AnyHashable]? {
        var error: Unmanaged<CFError>?
        guard
            let access = SecAccessControlCreateWithFlags(
                kCFAllocatorDefault, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error)
        else {
            return nil
        }
        return [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "protected",
            kSecAttrAccessControl as String: access,
            kSecValueData as String: Data("secret".utf8),
        ]
    }

    /// The code and domain of a refused access control, read with the CFError functions.
    static func refusedAccessControl() -> (code: CFIndex, domain: String, description: String, userInfo: [String: Any])?
    {
        var error: Unmanaged<CFError>?
        let access = SecAccessControlCreateWithFlags(nil, "not a protection" as CFString, [], &error)
        guard access == nil, let failure = error?.takeRetainedValue() else { return nil }
        let userInfo = CFErrorCopyUserInfo(failure) as? [String: Any] ?? [:]
        return (
            CFErrorGetCode(failure), CFErrorGetDomain(failure) as String, CFErrorCopyDescription(failure) as String,
            userInfo
        )
    }

    /// An `NSMutableDictionary` query with `kCFBooleanTrue`, as Objective-C-minded code builds it.
    static func mutableDictionaryLookup(service: String, account: String) -> String? {
        let query = NSMutableDictionary()
        query[kSecClass] = kSecClassGenericPassword
        query[kSecAttrService] = service
        query[kSecAttrAccount] = account
        query[kSecReturnData] = kCFBooleanTrue
        var result: CFTypeRef?
        guard SecItemCopyMatching(query, &result) == errSecSuccess, let data = result as? Data else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A query whose keys are optional strings.
    static func optionalKeyDelete(service: String) -> OSStatus {
        let query: [String?: AnyObject] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service as CFString,
        ]
        return SecItemDelete(query as CFDictionary)
    }

    static func randomKey() -> [UInt8]? {
        var key = [UInt8](repeating: 0, count: 32)
        let status = SecRandomCopyBytes(kSecRandomDefault, key.count, &key)
        return status == errSecSuccess ? key : nil
    }

    /// What the shared web credential calls answer an app without associated domains.
    static func sharedWebCredentialErrors() -> (added: CFIndex?, requested: CFIndex?, credentials: Int?) {
        var added: CFIndex?
        SecAddSharedWebCredential("example.com" as CFString, "me" as CFString, "pw" as CFString) { error in
            added = error.map { CFErrorGetCode($0) }
        }
        var requested: CFIndex?
        var credentials: Int?
        SecRequestSharedWebCredential(nil, nil) { array, error in
            requested = error.map { CFErrorGetCode($0) }
            credentials = (array as? [[String: Any]])?.count
        }
        _ = kSecSharedPassword as String
        return (added, requested, credentials)
    }

    static func generatedPassword() -> String? {
        SecCreateSharedWebCredentialPassword() as String?
    }

    /// Contexts compared and kept as objects, as iOS code does.
    static func contextsAreObjects() -> Bool {
        let first = LAContext()
        let second = LAContext()
        let query: [String: AnyHashable] = [kSecUseAuthenticationContext as String: first]
        return first != second && query[kSecUseAuthenticationContext as String] == AnyHashable(first)
            && Set([first, first, second]).count == 2
    }

    /// Flags from a stored `CFOptionFlags`, and two constraints with no conjunction.
    static func flagsFromStorage(_ stored: CFOptionFlags) -> SecAccessControl? {
        let flags = SecAccessControlCreateFlags(rawValue: stored).union([.biometryAny, .devicePasscode])
        var error: Unmanaged<CFError>?
        return SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, &error)
    }

    /// An internet password as KeychainAccess-style wrappers store one, read back by server.
    static func internetPassword() -> [String: Any]? {
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: "example.com",
            kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
            kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
            kSecAttrPort as String: NSNumber(value: 443),
            kSecAttrPath as String: "/login",
            kSecAttrAccount as String: "alice",
            kSecValueData as String: "pw".data(using: .utf8)!,
            kSecUseDataProtectionKeychain as String: true,
        ]
        guard SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess else { return nil }
        let query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: "example.com",
            kSecReturnAttributes as String: kCFBooleanTrue as Any,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? [String: Any]
    }

    /// The "remove all" helper of most wrappers: every item of a class in the app's groups.
    static func removeAll(_ itemClass: CFString) -> OSStatus {
        SecItemDelete([kSecClass as String: itemClass] as CFDictionary)
    }

    static func message(for status: OSStatus) -> String? {
        SecCopyErrorMessageString(status, nil) as String?
    }
}
