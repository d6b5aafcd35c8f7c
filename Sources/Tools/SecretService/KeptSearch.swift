import KeychainClient

/// A client's latest search of the keychain, kept to answer the same search again without
/// asking keychaind while nothing the answer depends on may have changed: keychaind's change
/// number of the keychain, which the bridge watches on a connection of its own, has not moved
/// (``DaemonTransport/changeStamp()``: an item written by any program, a lock or an unlock, a
/// grant, a sync each move it before their reply leaves), and for at most ``lifetime``.
///
/// A client that looks an item up again and again (secretstorage's lookup is SearchItems, then
/// the item's secret) makes one request to keychaind a lookup, not two. What is kept is what
/// keychaind answered the same client, as the bridge holds it anyway for the `Label` and
/// `Locked` that follow (``RecentlyUnlockedItems``): the matches' ids, whether each is
/// readable, and the labels of the readable ones; never a secret, which every `GetSecret` asks
/// keychaind for. The lifetime bounds what the number cannot see: a program that opens the same
/// keychain directory itself (the embedded keychain) writes without keychaind.
struct KeptSearch {
    /// How long an answer is kept at most.
    static let lifetime: Duration = .seconds(1)
    /// The most matches a kept answer lists: the lookups it is for find an item or a few, and a
    /// search of thousands is left out of the bridge's memory.
    static let mostMatches = 100

    let collection: String?
    let attributes: [String: String]
    /// Where the keychain stood before the search was asked.
    let stamp: DaemonTransport.ChangeStamp
    let made = ContinuousClock.now
    let matches: [SearchMatch]

    /// True when it answers a search of `collection` for `attributes` asked with the keychain at
    /// `now`.
    func answers(_ collection: String?, _ attributes: [String: String], at now: DaemonTransport.ChangeStamp) -> Bool {
        stamp == now && self.collection == collection && self.attributes == attributes
            && made.duration(to: .now) < Self.lifetime
    }
}
