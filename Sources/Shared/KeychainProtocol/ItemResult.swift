import Foundation

/// One item as returned to the caller: only the parts the request asked for.
public struct ItemResult: Sendable {
    /// The item's class.
    public var itemClass: ItemClass
    /// Attributes by Apple's raw name, when `kSecReturnAttributes` was set (includes `agrp`,
    /// `pdmn`, `sync`, `cdat`, `mdat`).
    public var attributes: [String: AttributeValue]?
    /// The secret, when `kSecReturnData` was set.
    public var secret: SecretBytes?
    /// The persistent reference, when `kSecReturnPersistentRef` was set.
    public var persistentRef: Data?
    /// The access control, returned with the attributes when the item has one.
    public var accessControl: AccessControl?

    /// Creates a result.
    public init(
        itemClass: ItemClass, attributes: [String: AttributeValue]? = nil, accessControl: AccessControl? = nil,
        secret: SecretBytes? = nil, persistentRef: Data? = nil
    ) {
        self.accessControl = accessControl
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.persistentRef = persistentRef
    }
}
