import Foundation
import Security

/// git's credentials as internet passwords in the keychain, as `git-credential-osxkeychain`
/// keeps them on macOS: the server, protocol, port and path of the URL, the username as the
/// account, the password as the item's data. They are the helper's own items (its access group
/// is its executable's), so no other app sees them unless the owner allows it.
enum CredentialStore {
    /// The keychain's protocol for git's, or nil for one it has none for (the helper then does
    /// nothing, as osxkeychain does).
    static func keychainProtocol(_ name: String?) -> CFString? {
        switch name {
        case "https": kSecAttrProtocolHTTPS
        case "http": kSecAttrProtocolHTTP
        case "ftp": kSecAttrProtocolFTP
        case "ftps": kSecAttrProtocolFTPS
        case "imap": kSecAttrProtocolIMAP
        case "imaps": kSecAttrProtocolIMAPS
        case "smtp": kSecAttrProtocolSMTP
        default: nil
        }
    }

    /// The query for the items `credential` names; nil when it names no server or a protocol
    /// the keychain has none for.
    static func query(_ credential: CredentialDescription) -> [String: Any]? {
        guard let host = credential.host, !host.isEmpty, let keychainProtocol = keychainProtocol(credential.protocol)
        else { return nil }
        var query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: host,
            kSecAttrProtocol as String: keychainProtocol,
        ]
        if let port = credential.port { query[kSecAttrPort as String] = port }
        if let path = credential.path, !path.isEmpty { query[kSecAttrPath as String] = path }
        if let username = credential.username, !username.isEmpty { query[kSecAttrAccount as String] = username }
        return query
    }

    /// `get`: the username and password of the first item `credential` names, or nil.
    static func find(_ credential: CredentialDescription) throws -> CredentialDescription? {
        guard var query = query(credential) else { return nil }
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnAttributes as String] = true
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        try check(status)
        guard let item = result as? [String: Any], let data = item[kSecValueData as String] as? Data else {
            return nil
        }
        var found = CredentialDescription()
        found.username = item[kSecAttrAccount as String] as? String
        found.password = String(decoding: data, as: UTF8.self)
        return found
    }

    /// `store`: adds the credential, or replaces the password of the one stored for the same
    /// URL and username. A credential without a username or a password is not stored.
    static func store(_ credential: CredentialDescription) throws {
        guard let username = credential.username, !username.isEmpty, let password = credential.password,
            var query = query(credential)
        else { return }
        query[kSecAttrAccount as String] = username
        let data = Data(password.utf8)
        var attributes = query
        attributes[kSecValueData as String] = data
        attributes[kSecAttrLabel as String] = credential.host
        let status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            try check(SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary))
        } else {
            try check(status)
        }
    }

    /// `erase`: deletes the items `credential` names; with a password, only those that hold it
    /// (git passes the password it was refused with: another one stored since is kept).
    static func erase(_ credential: CredentialDescription) throws {
        guard let query = query(credential) else { return }
        guard let password = credential.password else {
            let status = SecItemDelete(query as CFDictionary)
            if status != errSecItemNotFound { try check(status) }
            return
        }
        var search = query
        search[kSecMatchLimit as String] = kSecMatchLimitAll
        search[kSecReturnPersistentRef as String] = true
        search[kSecReturnData as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &result)
        if status == errSecItemNotFound { return }
        try check(status)
        for item in result as? [[String: Any]] ?? [] {
            guard let data = item[kSecValueData as String] as? Data, data == Data(password.utf8),
                let reference = item[kSecValuePersistentRef as String] as? Data
            else { continue }
            try check(SecItemDelete([kSecValuePersistentRef as String: reference] as CFDictionary))
        }
    }

    /// Throws a keychain status other than success, with its message.
    static func check(_ status: OSStatus) throws {
        guard status != errSecSuccess else { return }
        // What git shows its user: for the status a locked keychain gives, what to do about it.
        let message =
            status == errSecInteractionNotAllowed
            ? "the keychain is locked (or the item needs you to authenticate, and there is no terminal to ask on): "
                + "run `keychainctl unlock`, then try again"
            : SecCopyErrorMessageString(status, nil) as String? ?? "the keychain refused"
        throw HelperError(description: "\(message) (OSStatus \(status))")
    }
}

/// A failure the helper reports on standard error (git shows it and goes on).
struct HelperError: Error, CustomStringConvertible {
    let description: String
}
