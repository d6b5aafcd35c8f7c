import Foundation
import KeychainProtocol
import KeychainServer
import Logging

/// keychaind syncs by itself (Docs/Sync.md, "The local side"): a few seconds after a write of a
/// synchronizable item, so that a burst shares one publish, and every
/// ``Configuration/syncIntervalSeconds`` while a remote is set. A keychain that is locked, or
/// whose sync is not set up, is left alone; a sync that fails leaves local writes alone and
/// says why in `keychainctl sync status`.
extension KeychainDaemon {
    /// Syncs every opened keychain at each interval.
    func syncPeriodically() async {
        let interval = configuration.syncIntervalSeconds
        guard interval > 0 else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(interval))
            guard !Task.isCancelled else { return }
            for keychain in keychains.withLock({ Array($0.values) }) {
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    // git runs for a while: never on the cooperative pool.
                    DispatchQueue.global().async { [self] in
                        sync(keychain, because: "every \(Int(interval)) s")
                        done.resume()
                    }
                }
            }
        }
    }

    /// Syncs `keychain` ``Configuration/syncDelaySeconds`` from now, unless a sync is due already.
    func syncSoon(_ keychain: UserKeychain) {
        let scheduled = keychain.syncScheduled.withLock { scheduled in
            defer { scheduled = true }
            return scheduled
        }
        guard !scheduled else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + configuration.syncDelaySeconds) { [self] in
            keychain.syncScheduled.withLock { $0 = false }
            sync(keychain, because: "a synchronizable item changed")
        }
    }

    private func sync(_ keychain: UserKeychain, because reason: String) {
        guard let server = keychain.onDemand.openedServer, let result = server.syncIfSetUp() else { return }
        // What the remote brought is in the keychain now, even after a failure part way.
        keychain.changes?.advance()
        var metadata: Logger.Metadata = ["uid": "\(keychain.uid)", "because": "\(reason)"]
        switch result {
        case .success(let report):
            recordSync(report, &metadata)
            logger.info("synced", metadata: metadata)
        case .failure(let error):
            metadata["error"] = "\(error.message)"
            logger.notice("sync failed; local writes go on", metadata: metadata)
        }
    }

    /// A sync's counts in `metadata`, and a critical line for each thing it refused of the
    /// remote (a record or list altered, forged, replayed or rolled back there).
    func recordSync(_ report: SyncReport, _ metadata: inout Logger.Metadata) {
        metadata["published"] = "\(report.published)"
        metadata["applied"] = "\(report.applied)"
        for refusal in report.refused {
            var details = metadata
            details["because"] = "\(refusal)"
            audit.critical("sync refused what the remote holds: nothing of it was applied", metadata: details)
        }
    }
}

extension KeychainRequest {
    /// True for a write that may change a synchronizable item.
    var changesSynchronizableItems: Bool {
        switch self {
        case .add(let item): item.synchronizable
        case .update(let query, _), .delete(let query): query.synchronizable != .no
        default: false
        }
    }
}
