/// Who is calling the keychain: the access groups the caller belongs to.
///
/// In daemon mode the identity comes from the kernel (`SO_PEERCRED`); in embedded mode the
/// program states it and nothing checks it (see README, Security model).
public struct CallerIdentity: Sendable, Hashable {
    /// The caller's access groups; the first is the default group for new items.
    public var accessGroups: [String]
    /// True for the device owner's administrative tool (`keychainctl`): it may search every
    /// access group, as Apple's `security` tool does.
    public var isOwnerTool: Bool

    /// Creates an identity; `accessGroups` must not be empty.
    public init(accessGroups: [String], isOwnerTool: Bool = false) {
        precondition(!accessGroups.isEmpty, "a caller belongs to at least its default access group")
        self.accessGroups = accessGroups
        self.isOwnerTool = isOwnerTool
    }

    /// The group new items go to when the request names none.
    public var defaultAccessGroup: String { accessGroups[0] }
}
