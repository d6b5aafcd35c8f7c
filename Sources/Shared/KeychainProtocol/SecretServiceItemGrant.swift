/// The owner's leave for an app to read one Secret Service item of another app
/// (``KeychainRequest/allowOtherAppSecretItem(service:account:_:)``, "Always Allow"), kept
/// among the owner's entitlements under the app as the pseudo-group
/// `secret-service-item:SERVICE/ACCOUNT@GROUP`, so `keychainctl apps list` shows it and
/// `keychainctl apps revoke APP GRANT` takes it back. It gives no access group: only this item,
/// read only.
public struct SecretServiceItemGrant: Hashable, Sendable {
    public static let prefix = "secret-service-item:"

    /// The item's `svce` (`secret-service:login`), `acct` (its id) and access group (the app
    /// that made it).
    public var service: String
    public var account: String
    public var ownerGroup: String

    /// The grant of item (`service`, `account`) of `ownerGroup`.
    public init(service: String, account: String, ownerGroup: String) {
        self.service = service
        self.account = account
        self.ownerGroup = ownerGroup
    }

    /// The grant an entitlement names; nil for a shared access group.
    public init?(entitlement: String) {
        guard entitlement.hasPrefix(Self.prefix) else { return nil }
        let rest = entitlement.dropFirst(Self.prefix.count)
        guard let slash = rest.firstIndex(of: "/"), let at = rest[slash...].firstIndex(of: "@") else { return nil }
        service = String(rest[..<slash])
        account = String(rest[rest.index(after: slash)..<at])
        ownerGroup = String(rest[rest.index(after: at)...])
    }

    /// The entitlement that keeps it.
    public var entitlement: String { "\(Self.prefix)\(service)/\(account)@\(ownerGroup)" }
}

extension SecretServiceItemGrant {
    /// What the `svce` of every Secret Service item begins with; its collection's name follows.
    public static let servicePrefix = "secret-service:"
}
