import Foundation
import KeychainProtocol
import StorageContracts
import Synchronization

/// What the keychain remembers of the Secret Service items it opened under one class key, so
/// that a search that answers with paths (`SearchItems`) reads only the index columns of the
/// items it has opened before: for each item (by its row id), the identity, version and
/// access-group tag its row had, the item's address (service, account, the group that owns it),
/// label and secret's content type, and a prefix of each of its attribute hashes.
///
/// It belongs to the opened class key (``ClassKeySet``) and goes with it: a lock, by this
/// process or another, removes the class key's entry, the next use finds it gone and forgets the
/// key and these addresses with it; an unlock opens a new key with none. Nothing here is a
/// secret; what it holds while unlocked is the addresses, labels and content types of items
/// already opened, which the keychain's memory held anyway for as long as each request ran
/// (Docs/DataProtection.md).
///
/// It is trusted only as far as the row it came from: the search checks a remembered address
/// against the row's current identity, version and access-group tag (from the head the row
/// ledger checked)
/// and each hash the search asks for against the prefixes, and opens the row anew on any
/// difference.
public final class RememberedItemAddresses: Sendable {
    /// One opened item's address and what its row carried then. A class: a search of 10,000
    /// items looks each up, and a copy of a structure of ten references counted each of them.
    public final class Entry: Sendable {
        public let identity: ColumnBytes
        public let version: Int64
        public let accessGroupTag: ColumnBytes
        /// The first 8 bytes of each of the item's attribute hashes (``prefix(_:)``): enough to
        /// tell which searches the item really matches (the hashes are keyed; nobody without
        /// the key can make one collide).
        public let attributeHashPrefixes: Set<UInt64>
        public let address: SecretServiceItemGrant
        /// The item's label (`labl`), nil for one without a text label.
        public let label: String?
        /// Its secret's content type (``ItemClass/secretServiceContentTypeAttribute``), nil for
        /// one without.
        public let contentType: String?

        /// Creates an entry.
        public init(
            identity: ColumnBytes, version: Int64, accessGroupTag: ColumnBytes, attributeHashes: [Data],
            address: SecretServiceItemGrant, label: String?, contentType: String?
        ) {
            self.identity = identity
            self.version = version
            self.accessGroupTag = accessGroupTag
            attributeHashPrefixes = Set(attributeHashes.map(RememberedItemAddresses.prefix))
            self.address = address
            self.label = label
            self.contentType = contentType
        }

        /// Whether the item carries every hash of which `prefixes` are the prefixes.
        public func carries(_ prefixes: [UInt64]) -> Bool {
            prefixes.allSatisfy(attributeHashPrefixes.contains)
        }
    }

    /// The first 8 bytes of an attribute hash, as an entry keeps them.
    public static func prefix(_ hash: Data) -> UInt64 {
        hash.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// At most this many items are remembered under one class key; past it, new ones are not
    /// (they are opened at each search, as before).
    public static let limit = 200_000

    /// By row id, the cheap key; each entry names the identity it belongs to, which the row must
    /// still have.
    private let entries = Mutex<[Int64: Entry]>([:])

    init() {}

    /// Hands `body` the entry remembered for each row id of `rows` (nil where none), in order,
    /// under one lock.
    public func lookUp(_ rows: [Int64], _ body: (Int, Entry?) -> Void) {
        entries.withLock { entries in
            for (index, row) in rows.enumerated() { body(index, entries[row]) }
        }
    }

    /// Remembers each entry under its row id.
    public func remember(_ opened: [(row: Int64, entry: Entry)]) {
        entries.withLock { entries in
            for (row, entry) in opened where entries.count < Self.limit || entries[row] != nil {
                entries[row] = entry
            }
        }
    }

    /// How many items are remembered.
    public var count: Int { entries.withLock { $0.count } }
}
