import Foundation

/// A parsed `SecItemAdd` dictionary.
public struct NewItem: Sendable {
    /// `kSecClass`.
    public var itemClass: ItemClass
    /// Class attributes, by Apple's raw name.
    public var attributes: [String: AttributeValue]
    /// `kSecAttrAccessGroup`; nil means the caller's default group.
    public var accessGroup: String?
    /// `kSecAttrAccessible`; nil means `whenUnlocked`, Apple's default.
    public var accessibility: Accessibility?
    /// `kSecAttrSynchronizable`.
    public var synchronizable: Bool
    /// `kSecValueData`, the secret; nil stores an empty secret.
    public var secret: SecretBytes?
    /// What to return (iOS returns nothing unless asked).
    public var returns: ReturnSelection
    /// `kSecAttrAccessControl`; its protection stands in for `accessibility`.
    public var accessControl: AccessControl?
    /// The app's password, for an access control with `applicationPassword`.
    public var applicationPassword: SecretBytes?
    /// The dates to keep, for an item moved in from another store (`keychain-secret-service
    /// import` keeps gnome-keyring's); nil, as Apple's API always leaves it, for now. Not
    /// Apple's: `cdat` and `mdat` are otherwise the keychain's alone to set.
    public var keptDates: KeptDates?

    /// Creates an item description.
    public init(
        itemClass: ItemClass, attributes: [String: AttributeValue] = [:], accessGroup: String? = nil,
        accessibility: Accessibility? = nil, synchronizable: Bool = false, secret: SecretBytes? = nil,
        returns: ReturnSelection = []
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.secret = secret
        self.returns = returns
    }
}

/// A parsed `SecItemUpdate` attributes-to-update dictionary.
public struct ItemChanges: Sendable {
    /// New attribute values, by Apple's raw name.
    public var attributes: [String: AttributeValue]
    /// A new `kSecAttrAccessGroup`.
    public var accessGroup: String?
    /// A new `kSecAttrAccessible`.
    public var accessibility: Accessibility?
    /// A new `kSecAttrSynchronizable`.
    public var synchronizable: Bool?
    /// A new `kSecValueData`.
    public var secret: SecretBytes?
    /// A new `kSecAttrAccessControl`.
    public var accessControl: AccessControl?
    /// True when the item's Secret Service attributes (``ItemClass/secretServiceAttributePrefix``)
    /// are replaced by those in ``attributes``: each it had is removed first, as
    /// `org.freedesktop.Secret.Item.Attributes` is set whole. Not Apple's.
    public var replacesSecretServiceAttributes = false

    /// Creates a change set.
    public init(
        attributes: [String: AttributeValue] = [:], accessGroup: String? = nil,
        accessibility: Accessibility? = nil, synchronizable: Bool? = nil, secret: SecretBytes? = nil
    ) {
        self.attributes = attributes
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.synchronizable = synchronizable
        self.secret = secret
    }
}

/// An item's creation and modification dates, kept from the store it came from.
public struct KeptDates: Sendable, Hashable {
    public var created: Date
    public var modified: Date

    /// Dates `created` and `modified`.
    public init(created: Date, modified: Date) {
        self.created = created
        self.modified = modified
    }
}
