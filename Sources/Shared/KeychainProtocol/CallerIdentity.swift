/// Who is calling the keychain: the access groups the caller belongs to, and the connection
/// the call came on.
///
/// In daemon mode the identity comes from the kernel (`SO_PEERCRED`, the executable behind the
/// peer's pidfd); in embedded mode the program states it and nothing checks it
/// (Docs/SecurityModel.md).
public struct CallerIdentity: Sendable, Hashable {
    /// The caller's access groups; the first is the default group for new items.
    public var accessGroups: [String]
    /// True when the caller acts for the device owner: through keychaind, an app in an open
    /// owner session (`keychainctl owner login`); embedded, the owner's tool (`keychainctl`),
    /// by its own word. It may search every access group, as Apple's `security` tool does, and
    /// manage entitlements and app declarations.
    public var actsForOwner: Bool
    /// The connection the request came on. What an authentication context earned is filed
    /// under it, so another connection naming the same context gets nothing.
    public var connection: UInt64
    /// The app's identifier as keychaind identified it (its executable in per-user mode), which
    /// the owner's leave to read another app's Secret Service item names
    /// (``SecretServiceItemGrant``); nil where nothing identified it (the embedded keychain).
    public var app: String?

    /// Creates an identity; `accessGroups` must not be empty.
    public init(accessGroups: [String], actsForOwner: Bool = false, connection: UInt64 = 0, app: String? = nil) {
        precondition(!accessGroups.isEmpty, "a caller belongs to at least its default access group")
        self.accessGroups = accessGroups
        self.actsForOwner = actsForOwner
        self.connection = connection
        self.app = app
    }

    /// The group new items go to when the request names none.
    public var defaultAccessGroup: String { accessGroups[0] }
}
