import Foundation

/// How a query treats `kSecAttrSynchronizable`.
public enum SynchronizableMatch: Sendable, Hashable, Codable {
    /// Absent or false: only items that do not sync (Apple's default).
    case no
    /// True: only synchronizable items.
    case yes
    /// `kSecAttrSynchronizableAny`: both.
    case any
}

/// How many results a query returns (`kSecMatchLimit`).
public enum MatchLimit: Sendable, Hashable, Codable {
    /// `kSecMatchLimitOne`, the default: the first match, as a single value.
    case one
    /// `kSecMatchLimitAll`: every match, as an array.
    case all
    /// A number: up to that many matches, as an array.
    case count(Int)

    /// The largest number of results, or nil for no limit.
    public var maximum: Int? {
        switch self {
        case .one: 1
        case .all: nil
        case .count(let n): n
        }
    }

    /// True when results come back as an array.
    public var returnsArray: Bool { self != .one }
}

/// Which `kSecReturn…` keys a request set.
public struct ReturnSelection: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `kSecReturnData`.
    public static let data = ReturnSelection(rawValue: 1 << 0)
    /// `kSecReturnAttributes`.
    public static let attributes = ReturnSelection(rawValue: 1 << 1)
    /// `kSecReturnPersistentRef`.
    public static let persistentRef = ReturnSelection(rawValue: 1 << 2)
}

/// A parsed search: the typed form of a `SecItemCopyMatching`, `SecItemUpdate` or `SecItemDelete`
/// query dictionary.
public struct ItemQuery: Sendable {
    /// The class searched (`kSecClass`); required.
    public var itemClass: ItemClass
    /// Attributes that must match exactly, by Apple's raw name (`acct`, `svce`, …).
    public var attributes: [String: AttributeValue]
    /// `kSecAttrAccessGroup`: limits the search to this group; nil searches every group the
    /// caller belongs to.
    public var accessGroup: String?
    /// `kSecAttrAccessible`: limits the search to items of this accessibility.
    public var accessibility: Accessibility?
    /// `kSecAttrSynchronizable`.
    public var synchronizable: SynchronizableMatch
    /// `kSecValuePersistentRef`: limits the search to one item.
    public var persistentRef: Data?
    /// `kSecMatchItemList` of persistent references: limits the search to these items.
    public var itemList: [Data]?
    /// `kSecMatchLimit`.
    public var limit: MatchLimit
    /// `kSecReturn…` keys.
    public var returns: ReturnSelection
    /// The authentication context whose evaluations may open access-controlled items
    /// (`kSecUseAuthenticationContext`); the server looks up what it earned.
    public var authenticationContext: AuthenticationContextID?
    /// The app's password for items protected by `applicationPassword`.
    public var applicationPassword: SecretBytes?
    /// `kSecUseAuthenticationUISkip`: leave out items whose data would need authentication.
    public var skipsItemsNeedingAuthentication = false
    /// `kSecMatchCaseInsensitive`: string attributes match whatever their letters' case.
    public var matchesCaseInsensitively = false

    /// True when some of the query's attributes can only be compared once an item is opened
    /// (dates, and strings compared without case), so the index cannot apply them or the limit.
    public var matchesAfterOpening: Bool {
        attributes.contains { name, value in
            if name == CommonAttribute.creationDate || name == CommonAttribute.modificationDate { return true }
            if matchesCaseInsensitively, case .string = value { return true }
            return false
        }
    }

    /// Creates a query.
    public init(
        itemClass: ItemClass, attributes: [String: AttributeValue] = [:], accessGroup: String? = nil,
        accessibility: Accessibility? = nil, synchronizable: SynchronizableMatch = .no,
        persistentRef: Data? = nil, limit: MatchLimit = .one, returns: ReturnSelection = []
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.persistentRef = persistentRef
        self.limit = limit
        self.returns = returns
    }
}
