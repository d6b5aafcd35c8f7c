import Foundation
import KeychainProtocol
import Synchronization

/// What the keychain remembers of the Secret Service items it opened under one class key, so
/// that a search that answers with paths (`SearchItems`) reads only the index columns of the
/// items it has opened before: for each item by identity, the version and access-group tag its
/// row had, the item's address (service, account, the group that owns it), and a prefix of each
/// of its attribute hashes.
///
/// It belongs to the opened class key (``ClassKeySet``) and goes with it: a lock, by this
/// process or another, removes the class key's entry, the next use finds it gone and forgets the
/// key and these addresses with it; an unlock opens a new key with none. Nothing here is a
/// secret or a label; what it holds while unlocked is the addresses of items already opened,
/// which the keychain's memory held anyway for as long as each request ran (Docs/DataProtection.md).
///
/// It is trusted only as far as the row it came from: the search checks a remembered address
/// against the row's current version and access-group tag (from the row ledger's checked head)
/// and each hash the search asks for against the prefixes, and opens the row anew on any
/// difference.
public final class RememberedItemAddresses: Sendable {
    /// One opened item's address and what its row carried then.
    public struct Entry: Sendable {
        public let version: Int64
        public let accessGroupTag: Data
        /// The first 8 bytes of each of the item's attribute hashes: enough to tell which
        /// searches the item really matches (the hashes are keyed; nobody without the key can
        /// make one collide).
        public let attributeHashPrefixes: Set<UInt64>
        public let address: SecretServiceItemGrant

        /// Creates an entry.
        public init(version: Int64, accessGroupTag: Data, attributeHashes: [Data], address: SecretServiceItemGrant) {
            self.version = version
            self.accessGroupTag = accessGroupTag
            attributeHashPrefixes = Set(attributeHashes.map(Self.prefix))
            self.address = address
        }

        /// Whether the item carries every one of `hashes`.
        public func carries(_ hashes: [Data]) -> Bool {
            hashes.allSatisfy { attributeHashPrefixes.contains(Self.prefix($0)) }
        }

        private static func prefix(_ hash: Data) -> UInt64 {
            hash.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    /// At most this many items are remembered under one class key; past it, new ones are not
    /// (they are opened at each search, as before).
    public static let limit = 200_000

    private let entries = Mutex<[Data: Entry]>([:])

    init() {}

    /// The entries remembered for `identities`, by identity (absent ones left out).
    public func entries(_ identities: [Data]) -> [Data: Entry] {
        entries.withLock { entries in
            var found: [Data: Entry] = [:]
            for identity in identities { found[identity] = entries[identity] }
            return found
        }
    }

    /// Remembers each entry under its identity.
    public func remember(_ opened: [(identity: Data, entry: Entry)]) {
        entries.withLock { entries in
            for (identity, entry) in opened where entries.count < Self.limit || entries[identity] != nil {
                entries[identity] = entry
            }
        }
    }

    /// How many items are remembered.
    public var count: Int { entries.withLock { $0.count } }
}
