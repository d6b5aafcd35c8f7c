import Foundation

/// A Swift-style view of the generic passwords of one service, in the spirit of the wrappers
/// iOS developers use (KeychainAccess, Valet).
///
/// For example:
///
/// ```swift
/// let keychain = Keychain(service: "com.example.chores")
///     .accessibility(.afterFirstUnlock)
///     .label("Chores sync token")
/// try keychain.set("s3cr3t", key: "sync-token")
/// let token = try keychain.get("sync-token")     // "s3cr3t"
/// keychain["sync-token"] = nil                   // removes it
/// ```
///
/// Values are limited to 1 MiB (`KeychainLimits.maximumSecretSize`); larger ones fail with
/// `errSecDataTooLarge` (-25302).
///
/// Throwing methods throw ``KeychainError``; the subscripts swallow errors (a failed read is
/// nil), as KeychainAccess's do.
public struct Keychain: Sendable {
    /// The `kSecAttrService` of every item.
    public let service: String
    /// The access group items go to and are searched in; nil for the caller's groups.
    public let accessGroup: String?
    /// When new and updated items can be read; `whenUnlocked` by default.
    public private(set) var itemAccessibility: Accessibility = .whenUnlocked
    /// Whether new items sync; false by default.
    public private(set) var isSynchronizable = false
    /// The `kSecAttrLabel` of new items.
    public private(set) var itemLabel: String?
    /// The `kSecAttrComment` of new items.
    public private(set) var itemComment: String?
    /// The authentication new items require to be read (`SecAccessControlCreateFlags`), if any.
    public private(set) var authenticationPolicy: SecAccessControlCreateFlags?
    /// How reads and writes may authenticate: prompt text, a reusable context, whether to prompt.
    private(set) var authentication = AuthenticationOptions()

    /// A view of the items of `service`, optionally in a shared access group.
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    /// A copy that writes items with `accessibility`.
    public func accessibility(_ accessibility: Accessibility) -> Keychain {
        var copy = self
        copy.itemAccessibility = accessibility
        return copy
    }

    /// A copy that writes items readable only after the device owner authenticates, for example
    /// `.accessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: .userPresence)`.
    /// Such items never sync.
    public func accessibility(
        _ accessibility: Accessibility, authenticationPolicy: SecAccessControlCreateFlags
    ) -> Keychain {
        var copy = self
        copy.itemAccessibility = accessibility
        copy.authenticationPolicy = authenticationPolicy
        return copy
    }

    /// A copy whose prompts say `prompt`.
    public func authenticationPrompt(_ prompt: String) -> Keychain {
        var copy = self
        copy.authentication.reason = prompt
        return copy
    }

    /// A copy that authenticates with `context`, so one authentication serves several calls.
    public func authenticationContext(_ context: LAContext) -> Keychain {
        var copy = self
        copy.authentication.context = context
        return copy
    }

    /// A copy that may prompt (`.allow`), fails instead (`.fail`), or skips protected items (`.skip`).
    public func authenticationUI(_ interface: AuthenticationInterface) -> Keychain {
        var copy = self
        copy.authentication.interface = interface
        return copy
    }

    /// A copy that writes synchronizable items (and reads only those), or not.
    public func synchronizable(_ synchronizable: Bool) -> Keychain {
        var copy = self
        copy.isSynchronizable = synchronizable
        return copy
    }

    /// A copy that labels new items.
    public func label(_ label: String) -> Keychain {
        var copy = self
        copy.itemLabel = label
        return copy
    }

    /// A copy that adds a comment to new items.
    public func comment(_ comment: String) -> Keychain {
        var copy = self
        copy.itemComment = comment
        return copy
    }

    // MARK: Reading and writing

    /// The string stored under `key`, or nil.
    public subscript(key: String) -> String? {
        get { try? get(key) }
        nonmutating set {
            if let newValue { try? set(newValue, key: key) } else { try? remove(key) }
        }
    }

    /// The data stored under `key`, or nil.
    public subscript(data key: String) -> Data? {
        get { try? getData(key) }
        nonmutating set {
            if let newValue { try? set(newValue, key: key) } else { try? remove(key) }
        }
    }

    /// Stores a string (UTF-8) under `key`, replacing any value.
    public func set(_ value: String, key: String) throws(KeychainError) {
        try set(Data(value.utf8), key: key)
    }

    /// Stores data under `key`, replacing any value.
    ///
    /// - Throws: `errSecDataTooLarge` over 1 MiB, `errSecInteractionNotAllowed` when locked.
    public func set(_ value: Data, key: String) throws(KeychainError) {
        let secret = SecretBytes(value)
        var attributes: [String: AttributeValue] = [
            kSecAttrService as String: .string(service), kSecAttrAccount as String: .string(key),
        ]
        if let itemLabel { attributes[kSecAttrLabel as String] = .string(itemLabel) }
        if let itemComment { attributes[kSecAttrComment as String] = .string(itemComment) }
        let accessControl = try authenticationPolicy.map {
            (flags: SecAccessControlCreateFlags) throws(KeychainError) -> AccessControl in
            try AccessControl(protection: itemAccessibility, flags: flags)
        }
        var changes = ItemChanges(
            attributes: attributes, accessibility: accessControl == nil ? itemAccessibility : nil, secret: secret)
        changes.accessControl = accessControl
        do {
            _ = try ProcessKeychain.perform(.update(query(key), changes), authenticating: authentication)
        } catch KeychainError.errSecItemNotFound {
            var item = NewItem(
                itemClass: .genericPassword, attributes: attributes, accessGroup: accessGroup,
                accessibility: accessControl == nil ? itemAccessibility : nil, synchronizable: isSynchronizable,
                secret: secret)
            item.accessControl = accessControl
            _ = try ProcessKeychain.perform(.add(item), authenticating: authentication)
        }
    }

    /// The string under `key`, or nil when there is none.
    ///
    /// - Throws: `errSecDecode` when the value is not UTF-8, `errSecInteractionNotAllowed` when locked.
    public func get(_ key: String) throws(KeychainError) -> String? {
        guard let data = try getData(key) else { return nil }
        guard let string = String(data: data, encoding: .utf8) else {
            throw KeychainError(.errSecDecode, "the value is not UTF-8 text; read it with getData(_:)")
        }
        return string
    }

    /// The data under `key`, or nil when there is none.
    public func getData(_ key: String) throws(KeychainError) -> Data? {
        var query = query(key)
        query.returns = .data
        do {
            guard
                case .items(let items) = try ProcessKeychain.perform(
                    .copyMatching(query), authenticating: authentication)
            else { return nil }
            return items.first?.secret?.copyData()
        } catch KeychainError.errSecItemNotFound {
            return nil
        }
    }

    /// Removes the value under `key`; no error when there is none.
    public func remove(_ key: String) throws(KeychainError) {
        do {
            _ = try ProcessKeychain.perform(.delete(query(key)))
        } catch KeychainError.errSecItemNotFound {}
    }

    /// Removes every item of this service.
    public func removeAll() throws(KeychainError) {
        do {
            _ = try ProcessKeychain.perform(.delete(query(nil)))
        } catch KeychainError.errSecItemNotFound {}
    }

    /// True when a value is stored under `key`. Reads attributes only, never the secret.
    public func contains(_ key: String) throws(KeychainError) -> Bool {
        do {
            _ = try ProcessKeychain.perform(.copyMatching(query(key)))
            return true
        } catch KeychainError.errSecItemNotFound {
            return false
        }
    }

    /// Every key stored for this service, sorted.
    public func allKeys() throws(KeychainError) -> [String] {
        var query = query(nil)
        query.returns = .attributes
        query.limit = .all
        do {
            guard case .items(let items) = try ProcessKeychain.perform(.copyMatching(query)) else { return [] }
            return items.compactMap {
                if case .string(let account)? = $0.attributes?[kSecAttrAccount as String] { return account }
                return nil
            }.sorted()
        } catch KeychainError.errSecItemNotFound {
            return []
        }
    }

    private func query(_ key: String?) -> ItemQuery {
        var attributes: [String: AttributeValue] = [kSecAttrService as String: .string(service)]
        if let key { attributes[kSecAttrAccount as String] = .string(key) }
        var query = ItemQuery(
            itemClass: .genericPassword, attributes: attributes, accessGroup: accessGroup,
            synchronizable: isSynchronizable ? .yes : .no)
        query.skipsItemsNeedingAuthentication = authentication.interface == .skip
        return query
    }
}
