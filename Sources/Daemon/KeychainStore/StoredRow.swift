import Foundation
import GRDB
import KeychainProtocol

/// One item as the store keeps it: structural columns in clear, keyed hashes for lookup, and
/// three ciphertexts. No attribute value and no secret is ever in clear here.
public struct StoredRow: Sendable, Hashable {
    /// SQLite's row id; nil before insertion.
    public var id: Int64?
    /// 16 random bytes, the item's permanent identity and persistent reference.
    public var identity: Data
    /// 1 when added, one more at every update; bound into the ciphertexts and kept in the row
    /// ledger (``RowLedger``). 0 for a row written before versions existed.
    public var version: Int64
    /// The item class's raw value (`genp`, `inet`, `keys`).
    public var itemClass: String
    /// Keyed hash of the access group name.
    public var accessGroupHash: Data
    /// The synchronizable flag.
    public var synchronizable: Bool
    /// The accessibility's raw value (`ak`, `cku`, …): needed in clear to pick the class key.
    public var accessibility: String
    /// Keyed hash of the class's composite primary key; unique.
    public var primaryKeyHash: Data
    /// Sealed attributes.
    public var metadata: Data
    /// Sealed per-item key.
    public var wrappedKey: Data
    /// Sealed secret.
    public var secret: Data
    /// The access control's canonical bytes (in clear, bound into the AAD), or nil.
    public var accessControl: Data?

    /// Creates a row.
    public init(
        id: Int64? = nil, identity: Data, version: Int64, itemClass: String, accessGroupHash: Data,
        synchronizable: Bool,
        accessibility: String, primaryKeyHash: Data, metadata: Data, wrappedKey: Data, secret: Data,
        accessControl: Data? = nil
    ) {
        self.accessControl = accessControl
        self.id = id
        self.identity = identity
        self.version = version
        self.itemClass = itemClass
        self.accessGroupHash = accessGroupHash
        self.synchronizable = synchronizable
        self.accessibility = accessibility
        self.primaryKeyHash = primaryKeyHash
        self.metadata = metadata
        self.wrappedKey = wrappedKey
        self.secret = secret
    }

    /// The columns ``init(row:)`` reads, in its order (by position: a lookup by name costs
    /// more than the rest of building the row).
    static let selection =
        "items.id, items.identity, items.version, items.itemClass, items.accessGroupHash, items.synchronizable, "
        + "items.accessibility, items.primaryKeyHash, items.metadata, items.wrappedKey, items.secret, "
        + "items.accessControl"

    /// The row `query` stands on, selected with ``selection``.
    ///
    /// - Throws: `errSecDecode` when a column does not hold the type the keychain writes.
    init(_ query: SQLiteQuery) throws(KeychainError) {
        id = try query.integer(0)
        identity = try query.blob(1)
        version = try query.integer(2)
        itemClass = try query.text(3)
        accessGroupHash = try query.blob(4)
        synchronizable = try query.integer(5) != 0
        accessibility = try query.text(6)
        primaryKeyHash = try query.blob(7)
        metadata = try query.blob(8)
        wrappedKey = try query.blob(9)
        secret = try query.blob(10)
        accessControl = try query.optionalBlob(11)
    }

    var arguments: StatementArguments {
        [
            identity, version, itemClass, accessGroupHash, synchronizable, accessibility, primaryKeyHash, metadata,
            wrappedKey, secret, accessControl,
        ]
    }
}

/// Which rows a search selects. Every condition must hold.
public struct RowFilter: Sendable, Hashable {
    /// The item class's raw value.
    public var itemClass: String
    /// Rows in any of these access groups (keyed hashes); nil for every group.
    public var accessGroupHashes: [Data]?
    /// Rows in none of these access groups (keyed hashes).
    public var excludedAccessGroupHashes: [Data] = []
    /// Rows with one of these synchronizable flags; nil for both.
    public var synchronizable: Bool?
    /// Rows of this accessibility; nil for any.
    public var accessibility: String?
    /// Rows carrying every one of these attribute hashes.
    public var attributeHashes: [Data]
    /// Rows whose primary-key hash is one of these; nil for any. Lets a query that names a
    /// whole primary key find its item through the unique index instead of the attribute table.
    public var primaryKeyHashes: [Data]?
    /// Rows with one of these identities; nil for any, empty for none.
    public var identities: [Data]?
    /// At most this many rows, oldest first; nil for all.
    public var limit: Int?

    /// Creates a filter.
    public init(
        itemClass: String, accessGroupHashes: [Data]?, synchronizable: Bool?, accessibility: String? = nil,
        attributeHashes: [Data] = [], primaryKeyHashes: [Data]? = nil, identities: [Data]? = nil, limit: Int? = nil
    ) {
        self.primaryKeyHashes = primaryKeyHashes
        self.itemClass = itemClass
        self.accessGroupHashes = accessGroupHashes
        self.synchronizable = synchronizable
        self.accessibility = accessibility
        self.attributeHashes = attributeHashes
        self.identities = identities
        self.limit = limit
    }
}
