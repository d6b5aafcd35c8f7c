/// The items a client's latest search listed as unlocked, remembered for a moment so that their
/// `Locked` property, which clients read of each item they found before they ask for its secret
/// (secretstorage does at every `get_secret`), is answered without asking keychaind again:
/// secretstorage's lookup (SearchItems, the item's `Label`, its `Locked`, GetSecret) is three
/// requests to keychaind, not four.
///
/// What it holds is what the search answered the same client: paths, never an attribute or a
/// secret. It is forgotten after ``lifetime``, at the client's next search, and at any call of
/// the client that changes something (a write, a lock, an unlock). Within the moment, a lock by
/// another program (`keychainctl lock`, the screen locking) is not seen by `Locked`: the
/// property says unlocked a moment longer, and `GetSecret`, which always asks keychaind, answers
/// `IsLocked` (as it does for a lock between any client's two calls).
struct RecentlyUnlockedItems {
    /// How long a search's answer stands: long enough for a client's next calls, short enough
    /// that a lock elsewhere shows in `Locked` at once to a person.
    static let lifetime: Duration = .seconds(1)

    private var paths: Set<String> = []
    private var listed = ContinuousClock.now

    /// Remembers `paths`, which a search listed as unlocked now, in place of the last search's.
    mutating func remember(_ paths: [String]) {
        self.paths = Set(paths)
        listed = .now
    }

    /// Forgets every path.
    mutating func forget() {
        paths = []
    }

    /// The members of the Secret Service's interfaces that change nothing: a call of any other
    /// makes the bridge forget.
    static let readOnlyMembers: Set<String> = [
        "OpenSession", "SearchItems", "GetSecret", "GetSecrets", "ReadAlias", "Get", "GetAll", "Close",
    ]

    /// True when the latest search listed `path` as unlocked less than ``lifetime`` ago.
    func listedUnlocked(_ path: String) -> Bool {
        paths.contains(path) && listed.duration(to: .now) < Self.lifetime
    }
}
