import Enclave
import Foundation
import KeychainProtocol
import KeychainSync

/// The circle's history is one line (Docs/Sync.md, "The circle of devices"): each list names the
/// digest of the one it follows, every version stays on the remote (`circle/lists/<version>`),
/// a device that missed versions checks each step, and a device that sees two lists following
/// one version has found a fork: it publishes nothing until the owner picks a branch.
extension KeychainServer {
    /// The remote's device list once this device accepts it (each version after the one it
    /// holds, signed by a member of the one before and naming its digest), or the one it holds;
    /// what it refused goes in `refused`.
    ///
    /// - Throws: `errSecDecode` when the circle's history forked, now or before (``SyncState/fork``).
    func acceptList(
        _ snapshot: SyncSnapshot, _ state: inout SyncState, _ keys: SyncCircleKeys, _ refused: inout [String]
    ) throws(KeychainError) -> SyncDeviceList {
        guard let held = state.list else { throw Self.notAMember }
        if let fork = state.fork { throw Self.forked(fork) }
        if let found = Self.fork(in: snapshot, accepted: Self.acceptedLists(state)) {
            state.fork = found
            try enclave.saveSyncState(state)
            try enclave.markSyncFork(found)
            throw Self.forked(found)
        }
        let current = try SyncDeviceList.decode(held)
        guard let bytes = snapshot.files[SyncPaths.list], Data(bytes) != held else { return current }
        do throws(KeychainError) {
            let remote = try SyncDeviceList.decode(Data(bytes))
            var steps: [SyncDeviceList] = []
            var last = current
            // A list of the first format named no digest: what follows it is taken as before.
            if current.previous != nil, remote.version > current.version + 1 {
                // The remote's version is its word: a walk as long as it asks is bounded.
                guard remote.version - current.version <= Self.maximumListSteps else {
                    throw KeychainError(
                        .errSecDecode,
                        "the circle's device list on the remote is refused: version \(remote.version) is more than "
                            + "\(Self.maximumListSteps) versions after this device's \(current.version)")
                }
                for version in (current.version + 1)..<remote.version {
                    guard let stored = snapshot.files[SyncPaths.list(version: version)] else {
                        throw KeychainError(
                            .errSecDecode,
                            "the circle's device list on the remote is refused: version \(version), before its "
                                + "version \(remote.version), is missing")
                    }
                    let step = try SyncDeviceList.decode(Data(stored))
                    try step.accept(after: last)
                    guard step.version == version else {
                        throw KeychainError(
                            .errSecDecode,
                            "the circle's device list on the remote is refused: version \(version) is not")
                    }
                    steps.append(step)
                    last = step
                }
            }
            try remote.accept(after: last)
            for list in steps + [remote] { state.hold(list.encoded) }
            return remote
        } catch {
            refused.append(error.message)
            return current
        }
    }

    /// The most versions one sync walks from the list it holds to the remote's: far more than a
    /// circle changes between two syncs of one of its devices.
    static let maximumListSteps: UInt64 = 1024

    /// The lists `state` holds: the earlier ones and the current one, by version.
    static func acceptedLists(_ state: SyncState) -> [UInt64: SyncDeviceList] {
        var lists: [UInt64: SyncDeviceList] = [:]
        for bytes in state.earlierLists + (state.list.map { [$0] } ?? []) {
            guard let list = try? SyncDeviceList.decode(bytes) else { continue }
            lists[list.version] = list
        }
        return lists
    }

    /// What shows a fork in `snapshot`: a list on the remote (the current one, or the version
    /// kept at `circle/lists/<V>`) that follows a version this device accepted, and differs from
    /// the next version it accepted. Nil when there is none. Only the versions this device holds
    /// are looked at (at most ``SyncState/maximumEarlierLists`` and one, each with one signature
    /// checked), whatever else the remote holds.
    static func fork(in snapshot: SyncSnapshot, accepted: [UInt64: SyncDeviceList]) -> String? {
        let current = snapshot.files[SyncPaths.list].flatMap { try? SyncDeviceList.decode(Data($0)) }
        for (version, ours) in accepted.sorted(by: { $0.key < $1.key }) where version > 1 {
            let kept = snapshot.files[SyncPaths.list(version: version)].flatMap { try? SyncDeviceList.decode(Data($0)) }
            guard let before = accepted[version - 1],
                let list = [kept, current].compactMap({ $0 }).first(where: {
                    $0.version == version && $0.encoded != ours.encoded && $0.follows(before)
                })
            else { continue }
            func signer(_ list: SyncDeviceList) -> String {
                let member = before.members.first { $0.id == list.signer }
                return "\(member?.name ?? "?") (\(SyncPaths.hex(list.signer).prefix(8)))"
            }
            return "the circle's history forked: two lists follow version \(before.version), the one this device "
                + "holds, signed by \(signer(ours)), and another on the remote, signed by \(signer(list)). This "
                + "device publishes nothing until you pick one: `keychainctl sync pick-branch --keep` (this "
                + "device's) or `keychainctl sync pick-branch --take` (the remote's)"
        }
        return nil
    }

    /// Why a device whose circle forked does not sync.
    static func forked(_ found: String) -> KeychainError { KeychainError(.errSecDecode, found) }

    /// Picks a branch after a fork: this device's lists go back on the remote (`keep`), or it
    /// follows the remote's from the last version both share, each step checked; then it syncs
    /// again.
    ///
    /// - Throws: `errSecParam` when the history has not forked; `errSecDecode` when the remote's
    ///   branch cannot be followed back to a version this device holds.
    func pickBranch(keepingThisDevices keep: Bool) throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), let held = state.list else { throw Self.notAMember }
        guard state.fork != nil else {
            throw KeychainError(.errSecParam, "the circle's history has not forked here: there is no branch to pick")
        }
        let accepted = Self.acceptedLists(state)
        let transport = transport(state.remote)
        if keep {
            var published = false
            for _ in 0..<Self.syncAttempts where !published {
                let snapshot = try transport.fetch()
                var changes: [String: [UInt8]?] = [SyncPaths.list: Array(held)]
                for list in accepted.values { changes[SyncPaths.list(version: list.version)] = Array(list.encoded) }
                if case .published = try transport.publish(changes, over: snapshot.token) { published = true }
            }
            guard published else {
                throw KeychainError(.errSecIO, "\(GitTransport.shown(state.remote)) kept changing: try again")
            }
        } else {
            let snapshot = try transport.fetch()
            let branch = try Self.branch(in: snapshot, reaching: accepted)
            guard let shared = branch.first else { throw Self.notAMember }
            state.earlierLists = accepted.values.filter { $0.version < shared.version }.sorted {
                $0.version < $1.version
            }
            .map(\.encoded)
            state.list = shared.encoded
            for list in branch.dropFirst() { state.hold(list.encoded) }
            // The epochs after the shared version are the other branch's: this device's keys of
            // those numbers are its own branch's, and the remote's wraps are taken again.
            state.wrappedKeys = state.wrappedKeys.filter { $0.key <= shared.epoch }
        }
        state.fork = nil
        try enclave.saveSyncState(state)
        try enclave.markSyncFork(nil)
        return try syncNow()
    }

    /// The remote's branch, from the last version this device holds as the remote does, to the
    /// remote's current list: each a valid next version of the one before.
    private static func branch(
        in snapshot: SyncSnapshot, reaching accepted: [UInt64: SyncDeviceList]
    ) throws(KeychainError) -> [SyncDeviceList] {
        let broken = KeychainError(
            .errSecDecode,
            "the remote's branch of the circle's history cannot be followed back to a version this device holds: "
                + "keep this device's (`keychainctl sync pick-branch --keep`)")
        guard let bytes = snapshot.files[SyncPaths.list], var cursor = try? SyncDeviceList.decode(Data(bytes)) else {
            throw broken
        }
        var branch = [cursor]
        while accepted[cursor.version]?.encoded != cursor.encoded {
            guard cursor.version > 1, let stored = snapshot.files[SyncPaths.list(version: cursor.version - 1)],
                let before = try? SyncDeviceList.decode(Data(stored)), cursor.follows(before)
            else { throw broken }
            branch.insert(before, at: 0)
            cursor = before
        }
        return branch
    }
}
