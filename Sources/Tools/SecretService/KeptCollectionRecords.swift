import KeychainClient
import KeychainProtocol

/// The collection records (``SecretCollections``) of the app a client last asked about, kept
/// to answer the next client of the same app without asking keychaind, while keychaind's change
/// number of the keychain has not moved (watched on a connection of the bridge's own, which
/// asks keychaind for nothing else) and for at most ``KeptSearch/lifetime``.
///
/// `secret-tool` is a new client at each run and reads the service's `Collections`, made of its
/// app's records, before it searches: one of the four requests to keychaind each run made. The
/// records are the app's own items (a collection's name, label, alias and dates), the same for
/// every client keychaind takes to be that app (a grant of another app's item, which may be
/// one connection's alone, never makes a record readable); no secret. Any write, lock or unlock
/// moves the number, and the next client is answered by keychaind.
final class KeptCollectionRecords {
    /// The bridge's own connection to keychaind, which watches the change number.
    private let watch: DaemonTransport
    private var kept:
        (
            app: String, stamp: DaemonTransport.ChangeStamp, made: ContinuousClock.Instant,
            records: [SecretCollections.Record]
        )?

    init(watch: DaemonTransport) {
        self.watch = watch
    }

    /// The records of `app`: kept, or asked for with `ask` (and kept when the number can be
    /// watched).
    func records(
        of app: String, _ ask: () throws(KeychainError) -> [SecretCollections.Record]
    ) throws(KeychainError) -> [SecretCollections.Record] {
        // Before the records are asked for: a change meanwhile makes them stale at once.
        let stamp = watch.changeStamp()
        if let kept, let stamp, kept.stamp == stamp, kept.app == app, kept.made.duration(to: .now) < KeptSearch.lifetime
        {
            return kept.records
        }
        kept = nil
        let records = try ask()
        if let stamp { kept = (app, stamp, .now, records) }
        return records
    }
}
