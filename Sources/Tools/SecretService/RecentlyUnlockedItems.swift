import KeychainClient

/// The items a client's latest search listed as unlocked, with the labels the search carried,
/// remembered for a moment so that their `Locked` and `Label` properties, which clients read of
/// each item they found before they ask for its secret (secretstorage reads `Label` to make its
/// `Item`, and `Locked` at every `get_secret`), are answered without asking keychaind again:
/// secretstorage's lookup (SearchItems, the item's `Label`, its `Locked`, GetSecret) is two
/// requests to keychaind, not four.
///
/// What it holds is what the search answered the same client: paths, the labels of the
/// client's own items (and other apps' ones the owner let it read) and the content types of its
/// own, never another attribute or a secret. A content type lets `GetSecret` ask keychaind for
/// the secret alone (``contentType(of:)``). It is forgotten after ``lifetime``, at the client's
/// next search, at any call of the client that changes something (a write, a lock, an unlock),
/// and once keychaind's change number of the keychain moved (when the bridge watches it: a lock
/// or relabel by another program through keychaind shows in these two properties at once). What
/// the number cannot see, a program that opens the keychain directory itself (the embedded
/// keychain), shows within the moment; `GetSecret` always asks keychaind for the secret.
struct RecentlyUnlockedItems {
    /// One item a search listed as unlocked, with what the search carried of it.
    struct Item {
        var path: String
        var label: String?
        var contentType: String?
    }

    /// How long a search's answer stands: long enough for a client's next calls, short enough
    /// that a lock elsewhere shows in `Locked` at once to a person.
    static let lifetime: Duration = .seconds(1)

    /// What the latest search listed: as it listed them until a question needs them by path,
    /// then by path. The table is made at the first question after a search, so that a search of
    /// thousands nobody asks about makes none (it was a sixth of the bridge's time in a
    /// `SearchItems` of 10,000).
    private enum Listing {
        case asListed([Item])
        case byPath([String: Item])
    }

    private var listing = Listing.byPath([:])
    private var listed = ContinuousClock.now
    /// keychaind's change number, as the bridge watches it (nil: the moment alone bounds it).
    private let changeWatch: DaemonTransport?
    /// Where the keychain stood before the latest search was asked.
    private var stamp: DaemonTransport.ChangeStamp?

    init(changeWatch: DaemonTransport? = nil) {
        self.changeWatch = changeWatch
    }

    /// Remembers `items`, which a search listed as unlocked now, in place of the last search's;
    /// `stamp`, taken before the search, ends them when the keychain's change number moves.
    mutating func remember(_ items: [Item], stamp: DaemonTransport.ChangeStamp? = nil) {
        listing = .asListed(items)
        listed = .now
        self.stamp = stamp
    }

    /// Forgets every path.
    mutating func forget() {
        listing = .byPath([:])
    }

    /// The members of the Secret Service's interfaces that change nothing: a call of any other
    /// makes the bridge forget.
    static let readOnlyMembers: Set<String> = [
        "OpenSession", "SearchItems", "GetSecret", "GetSecrets", "ReadAlias", "Get", "GetAll", "Close",
    ]

    /// True when the latest search listed `path` as unlocked less than ``lifetime`` ago.
    mutating func listedUnlocked(_ path: String) -> Bool {
        isCurrent && byPath().keys.contains(path)
    }

    /// The label the latest search carried for `path`, listed less than ``lifetime`` ago; nil
    /// when it listed no such path or sent no label.
    mutating func label(of path: String) -> String? {
        guard isCurrent else { return nil }
        return byPath()[path]?.label
    }

    /// The content type the latest search carried for the client's own item at `path`, while
    /// keychaind's change number has not moved since (and less than ``lifetime`` ago); nil when
    /// it carried none, or the number is not watched: a secret's content type changes with the
    /// secret, and only the number shows another program's change at once.
    mutating func contentType(of path: String) -> String? {
        guard stamp != nil, changeWatch != nil, isCurrent else { return nil }
        return byPath()[path]?.contentType
    }

    private var isCurrent: Bool {
        guard listed.duration(to: .now) < Self.lifetime else { return false }
        guard let stamp, let changeWatch else { return true }
        return changeWatch.isUnchanged(since: stamp)
    }

    /// The listed items by path (the first of a path listed twice).
    private mutating func byPath() -> [String: Item] {
        switch listing {
        case .byPath(let table): return table
        case .asListed(let items):
            var table: [String: Item] = Dictionary(minimumCapacity: items.count)
            for item in items where table[item.path] == nil { table[item.path] = item }
            listing = .byPath(table)
            return table
        }
    }
}
