import Foundation

/// What a device keeps of its circle between syncs (Docs/Sync.md, "The local side"), sealed
/// under a key derived from the device secret (``Enclave/saveSyncState(_:)``): the remote, its
/// identity key (sealed by the Enclave), the last device list it accepted, and what it has seen
/// and published, against which the remote's records are checked.
public struct SyncState: Codable, Sendable {
    /// A synchronizable item as this device last synced it.
    public struct Item: Codable, Sendable, Equatable {
        /// A digest of the item's row as it is in the keychain (nil: deleted here): a row whose
        /// digest differs was changed here since.
        public var row: Data?
        /// The clock of the version the keychain holds (``SyncTimestamp/encoded``).
        public var clock: Data

        /// An item's state.
        public init(row: Data?, clock: Data) {
            self.row = row
            self.clock = clock
        }
    }

    /// The remote, as the owner gave it.
    public var remote: String
    /// This device's name in the circle.
    public var deviceName: String
    /// The identity key, sealed by the Enclave (``Enclave/makeSyncIdentity()``).
    public var identity: Data
    /// The last device list this device accepted (``SyncDeviceList/encoded``); nil while it
    /// waits to be approved.
    public var list: Data?
    /// While waiting: the list it asked to join, as the remote showed it (not trusted): the
    /// owner confirms one of its members with a short code.
    public var offeredList: Data?
    /// The sync keys wrapped to this device, by epoch.
    public var wrappedKeys: [UInt32: Data]
    /// This device's head sequence, one more at each publish.
    public var sequence: UInt64
    /// The hybrid logical clock's last timestamp (``SyncTimestamp/encoded``).
    public var clock: Data?
    /// The highest head sequence accepted of each device (hex id).
    public var heads: [String: UInt64]
    /// The clock of each record accepted, by "device/name" (hex): an older one is a rollback.
    public var seen: [String: Data]
    /// The synchronizable items as last synced, by record name (hex).
    public var items: [String: Item]
    /// The records this device has on the remote: their clocks, by name (hex).
    public var published: [String: Data]
    /// When the last sync that reached the remote ended.
    public var lastSync: Date?
    /// Since when syncs fail.
    public var failingSince: Date?
    /// Why the last sync failed.
    public var lastError: String?
    /// What the last sync did: records published, items applied, what it refused.
    public var lastPublished: Int
    public var lastApplied: Int
    public var lastRefused: [String]

    /// The state of a device that just set up or asked to join.
    public init(remote: String, deviceName: String, identity: Data, list: Data?, offeredList: Data? = nil) {
        self.remote = remote
        self.deviceName = deviceName
        self.identity = identity
        self.list = list
        self.offeredList = offeredList
        wrappedKeys = [:]
        sequence = 0
        heads = [:]
        seen = [:]
        items = [:]
        published = [:]
        lastPublished = 0
        lastApplied = 0
        lastRefused = []
    }
}
