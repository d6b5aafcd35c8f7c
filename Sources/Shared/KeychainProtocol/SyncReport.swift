import Foundation

/// Where sync stands on one device (``KeychainReply/sync(_:)``), as `keychainctl sync status`
/// and `sync devices` show it.
public struct SyncReport: Sendable {
    /// This device's part in a circle.
    public enum Membership: UInt8, Sendable, Hashable {
        /// No remote is set.
        case none = 0
        /// It asked to join, and no member has approved it yet.
        case waitingForApproval = 1
        /// A member of the circle.
        case member = 2
    }

    /// A device of the circle, or one asking to join.
    public struct Device: Sendable, Hashable {
        /// Its id: 32 hex digits, from its identity key.
        public var id: String
        /// The name it was given.
        public var name: String
        /// On a device waiting to join, for the member whose answer it revealed its nonce for: the
        /// code to type on that member. Nil everywhere else: a member never shows a code.
        public var code: String?
        /// True for the device that answered.
        public var isThisDevice: Bool

        /// A device.
        public init(id: String, name: String, code: String?, isThisDevice: Bool) {
            self.id = id
            self.name = name
            self.code = code
            self.isThisDevice = isThisDevice
        }
    }

    /// A version of an item that lost to a later change on another device (Docs/Sync.md,
    /// "Conflicts"), kept on the remote for 30 days after the change that beat it.
    public struct KeptVersion: Sendable {
        /// The item's class (`genp`, `inet`, …).
        public var itemClass: String
        /// Its service (`svce`), or for an internet password its server (`srvr`).
        public var service: String
        /// Its account (`acct`).
        public var account: String
        /// The device that wrote it, by name.
        public var device: String
        /// When that device made the change.
        public var changed: Date
        /// The secret it held.
        public var secret: SecretBytes

        /// A kept version.
        public init(
            itemClass: String, service: String, account: String, device: String, changed: Date, secret: SecretBytes
        ) {
            self.itemClass = itemClass
            self.service = service
            self.account = account
            self.device = device
            self.changed = changed
            self.secret = secret
        }
    }

    public var membership: Membership
    /// The remote, as it was given.
    public var remote: String?
    /// The circle's members (as this device last accepted the list).
    public var members: [Device]
    /// Devices asking to join; on a device waiting to join, that device itself.
    public var requests: [Device]
    /// The sync key's epoch: one more each time a device is removed.
    public var epoch: UInt32
    /// When the last sync that reached the remote ended.
    public var lastSync: Date?
    /// Since when the remote could not be reached, or refused this device's changes; nil when the
    /// last sync worked.
    public var failingSince: Date?
    /// Why the last sync failed.
    public var lastError: String?
    /// Records the last sync wrote to the remote.
    public var published: Int
    /// Items the last sync changed in this keychain.
    public var applied: Int
    /// What the last sync refused of the remote (an altered, forged, replayed or rolled-back
    /// record or list), one line each; nothing of it changed this keychain.
    public var refused: [String]
    /// For ``SyncCommand/history``: the versions that lost a conflict and are still kept.
    public var kept: [KeptVersion]
    /// When the remote was last found gone back (reset, or an older copy put back) to before
    /// this device's last publish: what the sync that found it published again.
    public var wentBack: String?

    /// A report.
    public init(
        membership: Membership, remote: String? = nil, members: [Device] = [], requests: [Device] = [],
        epoch: UInt32 = 0, lastSync: Date? = nil, failingSince: Date? = nil, lastError: String? = nil,
        published: Int = 0, applied: Int = 0, refused: [String] = [], kept: [KeptVersion] = [],
        wentBack: String? = nil
    ) {
        self.kept = kept
        self.wentBack = wentBack
        self.membership = membership
        self.remote = remote
        self.members = members
        self.requests = requests
        self.epoch = epoch
        self.lastSync = lastSync
        self.failingSince = failingSince
        self.lastError = lastError
        self.published = published
        self.applied = applied
        self.refused = refused
    }
}
