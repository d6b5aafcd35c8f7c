import Foundation
import KeychainProtocol

/// Checks on typed requests that do not depend on stored items: schema, read-only attributes,
/// sizes, access-group membership, and Apple's combination rules.
enum RequestValidation {
    static let readOnlyAttributes: Set<String> = [CommonAttribute.creationDate, CommonAttribute.modificationDate]

    static func requireImplemented(_ itemClass: ItemClass) throws(KeychainError) {
        guard itemClass.isImplemented else {
            throw KeychainError(
                .errSecUnimplemented,
                "items of class \(itemClass.rawValue) are not supported yet; generic passwords, internet "
                    + "passwords, keys and certificates are"
            )
        }
    }

    /// Every attribute must belong to the class, have a form its type keeps, and fit the limits.
    static func checkAttributes(
        _ attributes: [String: AttributeValue], of itemClass: ItemClass, writing: Bool
    ) throws(KeychainError) {
        guard attributes.count <= KeychainLimits.maximumAttributeCount else {
            throw KeychainError(
                .errSecParam,
                "too many attributes (\(attributes.count)); at most \(KeychainLimits.maximumAttributeCount)")
        }
        var total = 0
        for (name, value) in attributes {
            guard name.utf8.count <= KeychainLimits.maximumAttributeName else {
                throw KeychainError(
                    .errSecParam, "an attribute's name is longer than \(KeychainLimits.maximumAttributeName) bytes")
            }
            if writing && readOnlyAttributes.contains(name) {
                // UNCONFIRMED which code Apple returns; errSecParam, as for other malformed input.
                throw KeychainError(
                    .errSecParam,
                    "attribute \(name) of a \(itemClass.rawValue) item is read-only; the keychain maintains it")
            }
            if readOnlyAttributes.contains(name) {
                guard case .date = value else { throw KeychainError(.errSecParam, "attribute \(name) takes a date") }
                continue
            }
            guard let type = itemClass.attributeType(name) else {
                throw KeychainError(.errSecNoSuchAttr, "\(name) is not an attribute of \(itemClass.rawValue) items")
            }
            guard type.accepts(value) else {
                throw KeychainError(
                    .errSecParam,
                    "attribute \(name) of a \(itemClass.rawValue) item takes \(type.takes), not a "
                        + "\(value.kind.rawValue)"
                )
            }
            let size =
                switch value {
                case .string(let string): string.utf8.count
                case .data(let data): data.count
                case .number, .bool, .date: 0
                }
            guard size <= KeychainLimits.maximumAttributeSize else {
                throw KeychainError(
                    .errSecDataTooLarge,
                    "attribute \(name.prefix(64)) is larger than 64 KiB (\(KeychainLimits.maximumAttributeSize) bytes)")
            }
            total += size + name.utf8.count
        }
        guard total <= KeychainLimits.maximumAttributesTotal else {
            throw KeychainError(
                .errSecDataTooLarge,
                "the item's attributes take \(total) bytes together; at most 1 MiB "
                    + "(\(KeychainLimits.maximumAttributesTotal) bytes)")
        }
    }

    static func checkSecret(_ secret: SecretBytes?) throws(KeychainError) {
        if let secret, secret.count > KeychainLimits.maximumSecretSize {
            throw KeychainError(
                .errSecDataTooLarge,
                "the item's data is \(secret.count) bytes; the keychain stores at most "
                    + "\(KeychainLimits.maximumSecretSize) bytes (\(KeychainLimits.secretSizeInWords)) per item: keep "
                    + "larger data in a file encrypted with a key stored here"
            )
        }
    }

    /// The caller must belong to `group` (the owner's tool belongs to every group).
    static func checkMembership(_ group: String, _ caller: CallerIdentity) throws(KeychainError) {
        guard caller.actsForOwner || caller.accessGroups.contains(group) else {
            throw KeychainError(.errSecMissingEntitlement, "this program is not a member of the requested access group")
        }
        guard !group.isEmpty, group.utf8.count <= 256 else {
            throw KeychainError(.errSecParam, "an access group name has 1 to 256 bytes")
        }
    }

    /// The protection an add or an update gives, from `kSecAttrAccessible` and
    /// `kSecAttrAccessControl`: the accessibility (nil when neither is given) and the
    /// constraints (nil when there are none).
    ///
    /// Every item reports an access control in its attributes (iOS 11.3 and later), so a
    /// dictionary read back and written again carries both keys. An access control without
    /// constraints is the accessibility alone (an item so added may be synchronizable, as the
    /// one it was read from). An accessibility beside an access control must be its protection;
    /// one that differs is `errSecParam`. (UNCONFIRMED whether iOS accepts an agreeing pair;
    /// refusing it would break the read-and-write-back idiom that its own attributes invite.)
    static func protection(
        _ accessibility: Accessibility?, _ accessControl: AccessControl?
    ) throws(KeychainError) -> (accessibility: Accessibility?, constraints: AccessControl?) {
        guard let accessControl else { return (accessibility, nil) }
        guard accessibility == nil || accessibility == accessControl.protection else {
            throw KeychainError(
                .errSecParam,
                "kSecAttrAccessControl already carries the accessibility; give it without kSecAttrAccessible")
        }
        return (accessControl.protection, accessControl.flags.isEmpty ? nil : accessControl)
    }

    /// The access groups an item request names, checked before the keychain is looked at, as
    /// on iOS: a group the caller is not entitled to is `errSecMissingEntitlement` whether or
    /// not a keychain exists yet, and a refused add creates none.
    static func checkNamedGroups(_ request: KeychainRequest, _ caller: CallerIdentity) throws(KeychainError) {
        let named: [String?]
        switch request {
        case .add(let item): named = [item.accessGroup]
        case .copyMatching(let query), .delete(let query): named = [query.accessGroup]
        case .update(let query, let changes): named = [query.accessGroup, changes.accessGroup]
        default: return
        }
        for case let group? in named { try checkMembership(group, caller) }
    }

    /// An entitlement names an app by its identity (an absolute executable path) and a shared
    /// group, which is never a path: an app's own group (its path) is not for sharing, so no
    /// grant can open one app's private items to another.
    static func checkEntitlement(app: String, group: String) throws(KeychainError) {
        try checkApp(app)
        guard !group.isEmpty, !group.hasPrefix("/"), group.utf8.count <= KeychainLimits.maximumAttributeSize else {
            throw KeychainError(
                .errSecParam,
                "a shared access group is a name such as com.example.shared, not a path (an app's own group is not "
                    + "shared)"
            )
        }
    }

    /// A declaration names an app by the absolute path of its executable and must itself be
    /// valid (``AppDeclaration/validate()``).
    static func checkDeclaration(app: String, _ declaration: AppDeclaration?) throws(KeychainError) {
        try checkApp(app)
        try declaration?.validate()
    }

    /// The owner's decisions name an app by the absolute path of its executable.
    private static func checkApp(_ app: String) throws(KeychainError) {
        guard app.hasPrefix("/"), app.utf8.count <= KeychainLimits.maximumAttributeSize else {
            throw KeychainError(.errSecParam, "an app is named by the absolute path of its executable")
        }
    }
}
