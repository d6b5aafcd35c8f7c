import Foundation
import KeychainProtocol

/// What a device keeps of its circle between syncs (Docs/Sync.md, "The local side"), sealed
/// under a key derived from the device secret (``Enclave/saveSyncState(_:)``): the remote, its
/// identity key (sealed by the Enclave), the last device list it accepted, and what it has seen
/// and published, against which the remote's records are checked.
///
/// Stored in the binary form ``encoded`` (about 150 bytes per synchronizable item), at most
/// ``maximumSize`` bytes.
public struct SyncState: Sendable {
    /// A synchronizable item as this device last synced it.
    public struct Item: Sendable, Equatable {
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
    /// While waiting: the list it asked to join, as the remote showed it (not trusted): an
    /// answer counts only when one of its members signed it, and the owner's code tells which.
    public var offeredList: Data?
    /// The sync keys wrapped to this device, by epoch.
    public var wrappedKeys: [UInt32: Data]
    /// This device's head sequence, one more at each publish.
    public var sequence: UInt64
    /// The hybrid logical clock's last timestamp (``SyncTimestamp/encoded``).
    public var clock: Data?
    /// The highest head sequence accepted of each device (hex id).
    public var heads: [String: UInt64]
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
    /// When the remote was last found gone back to before this device's last publish, and what
    /// was published again (``SyncReport/wentBack``). Absent, as the join's fields after it, from the states
    /// of versions before it.
    public var wentBack: String?
    /// While waiting to join: the nonce this device committed to in its request
    /// (``SyncJoin/commitment(publicKey:nonce:)``), secret until it reveals it.
    public var joinNonce: Data?
    /// While waiting to join: the member's answer this device revealed its nonce for
    /// (``SyncJoin/Answer/encoded``); the code is shown for it alone.
    public var fixedAnswer: Data?
    /// On a member: its one open answer to a machine asking to join (``SyncJoin/Answer/encoded``),
    /// the only one `sync approve CODE` compares a code with.
    public var openAnswer: Data?
    /// The lists this device accepted before ``list``, oldest first, at most
    /// ``maximumEarlierLists``: against them a list that follows one of them, and differs from
    /// the next one held, is found to be a fork.
    public var earlierLists: [Data] = []
    /// What this device found when the circle's history forked (two lists following one
    /// version); while set, it publishes nothing until the owner picks a branch.
    public var fork: String?

    /// The most earlier lists kept.
    public static let maximumEarlierLists = 64

    /// Holds `list` as the current one, keeping the one it replaces among the earlier ones.
    public mutating func hold(_ next: Data) {
        if let list, list != next {
            earlierLists.append(list)
            if earlierLists.count > Self.maximumEarlierLists { earlierLists.removeFirst() }
        }
        list = next
    }

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
        items = [:]
        published = [:]
        lastPublished = 0
        lastApplied = 0
        lastRefused = []
    }
}

extension SyncState {
    /// The largest state file read: room for about 400,000 synchronizable items.
    public static let maximumSize = 64 << 20
    private static let label = "swift-keychain sync state v1"

    /// The state's bytes.
    public var encoded: Data {
        var writer = WireWriter()
        writer.string(Self.label)
        writer.string(remote)
        writer.string(deviceName)
        writer.data(identity)
        writer.optional(list) { $0.data($1) }
        writer.optional(offeredList) { $0.data($1) }
        writer.array(wrappedKeys.sorted { $0.key < $1.key }) { writer, entry in
            writer.u32(entry.key)
            writer.data(entry.value)
        }
        writer.u64(sequence)
        writer.optional(clock) { $0.data($1) }
        writer.array(heads.sorted { $0.key < $1.key }) { writer, entry in
            writer.string(entry.key)
            writer.u64(entry.value)
        }
        writer.array(Array(items)) { writer, entry in
            writer.string(entry.key)
            writer.optional(entry.value.row) { $0.data($1) }
            writer.data(entry.value.clock)
        }
        writer.array(Array(published)) { writer, entry in
            writer.string(entry.key)
            writer.data(entry.value)
        }
        for date in [lastSync, failingSince] {
            writer.optional(date) { $0.double($1.timeIntervalSince1970) }
        }
        writer.optional(lastError) { $0.string($1) }
        writer.int(lastPublished)
        writer.int(lastApplied)
        writer.array(lastRefused) { $0.string($1) }
        writer.optional(wentBack) { $0.string($1) }
        for join in [joinNonce, fixedAnswer, openAnswer] { writer.optional(join) { $0.data($1) } }
        writer.array(earlierLists) { $0.data($1) }
        writer.optional(fork) { $0.string($1) }
        return Data(writer.finish())
    }

    /// Reads what ``encoded`` wrote.
    ///
    /// - Throws: ``WireError`` for anything else.
    public static func decode(_ bytes: Data) throws(WireError) -> SyncState {
        var reader = WireReader(Array(bytes))
        guard try reader.string(max: 64) == label else { throw WireError("not a sync state") }
        let text = 1 << 16
        var state = SyncState(
            remote: try reader.string(max: text), deviceName: try reader.string(max: text),
            identity: try reader.data(max: text), list: nil)
        state.list = try reader.optional { (reader: inout WireReader) throws(WireError) in try reader.data(max: 1 << 20)
        }
        state.offeredList = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.data(max: 1 << 20)
        }
        for (epoch, wrapped) in try reader.array(
            max: 1 << 20,
            { (reader: inout WireReader) throws(WireError) in
                (try reader.u32(), try reader.data(max: 1024))
            })
        {
            state.wrappedKeys[epoch] = wrapped
        }
        state.sequence = try reader.u64()
        state.clock = try reader.optional { (reader: inout WireReader) throws(WireError) in try reader.data(max: 64) }
        for (device, sequence) in try reader.array(
            max: 1 << 16,
            { (reader: inout WireReader) throws(WireError) in
                (try reader.string(max: 64), try reader.u64())
            })
        {
            state.heads[device] = sequence
        }
        for (name, item) in try reader.array(
            max: maximumSize,
            { (reader: inout WireReader) throws(WireError) in
                (
                    try reader.string(max: 64),
                    Item(
                        row: try reader.optional { (reader: inout WireReader) throws(WireError) in
                            try reader.data(max: 64)
                        }, clock: try reader.data(max: 64))
                )
            })
        {
            state.items[name] = item
        }
        for (name, clock) in try reader.array(
            max: maximumSize,
            { (reader: inout WireReader) throws(WireError) in
                (try reader.string(max: 64), try reader.data(max: 64))
            })
        {
            state.published[name] = clock
        }
        state.lastSync = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.date()
        }
        state.failingSince = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.date()
        }
        state.lastError = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: text)
        }
        state.lastPublished = try reader.int(in: 0...Int(Int32.max))
        state.lastApplied = try reader.int(in: 0...Int(Int32.max))
        state.lastRefused = try reader.array(max: 1 << 16) { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: text)
        }
        if reader.remaining > 0 {
            state.wentBack = try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: text)
            }
        }
        if reader.remaining > 0 {
            let join = { (reader: inout WireReader) throws(WireError) -> Data? in
                try reader.optional { (reader: inout WireReader) throws(WireError) in try reader.data(max: 1024) }
            }
            state.joinNonce = try join(&reader)
            state.fixedAnswer = try join(&reader)
            state.openAnswer = try join(&reader)
        }
        if reader.remaining > 0 {
            state.earlierLists = try reader.array(max: maximumEarlierLists) {
                (reader: inout WireReader) throws(WireError) in try reader.data(max: 1 << 20)
            }
            state.fork = try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: text)
            }
        }
        try reader.finish()
        return state
    }
}
