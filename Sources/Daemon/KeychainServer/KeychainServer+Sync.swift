import Enclave
import Foundation
import KeychainProtocol
import KeychainSync

/// The owner's sync commands (Docs/Sync.md): set up a circle, ask to join one and confirm it,
/// approve a device, remove one, sync now, and say where sync stands. One runs at a time.
extension KeychainServer {
    /// How many times a sync fetches again when the remote moved on while it ran.
    static let syncAttempts = 8
    /// The directory, in the keychain's, of sync's clone of the remote.
    static let syncCloneName = "sync-remote"

    /// Runs `command` for the owner.
    ///
    /// - Throws: `errSecMissingEntitlement` for a caller that is not the owner; what the command
    ///   throws otherwise.
    func sync(_ command: SyncCommand, caller: CallerIdentity) throws(KeychainError) -> SyncReport {
        try requireOwner(caller)
        return try syncInProgress.withLock { _ throws(KeychainError) in
            switch command {
            case .setUp(let remote, let name): return try setUpSync(remote: remote, deviceName: name)
            case .join(let remote, let name): return try askToJoin(remote: remote, deviceName: name)
            case .showJoinCode: return try showJoinCode()
            case .confirmJoin(let code): return try confirmJoin(code: code)
            case .now:
                try enclave.beginSyncRun()
                defer { enclave.endSyncRun() }
                return try syncNow()
            case .status:
                var report = try syncReport(try enclave.loadSyncState())
                // Read here, not in every report: while a sync runs its own mark stands.
                if let began = enclave.cutOffSyncRun() { report.lastError = Self.syncHeld(since: began).message }
                return report
            case .answer(let device): return try answerRequest(device: device)
            case .approve(let code): return try approveDevice(code: code)
            case .removeDevice(let device): return try removeDevice(device)
            case .history: return try syncHistory()
            case .pickBranch(let keep): return try pickBranch(keepingThisDevices: keep)
            }
        }
    }

    /// Syncs if sync is set up, this device is a member and the keychain is unlocked; nil
    /// otherwise. For keychaind's own syncs: a failure is kept in the state for `sync status`
    /// too. After a sync that was cut off (``Enclave/cutOffSyncRun()``), none runs until the
    /// owner's `sync now`: the failure says so.
    public func syncIfSetUp() -> Result<SyncReport, KeychainError>? {
        syncInProgress.withLock { _ -> Result<SyncReport, KeychainError>? in
            guard let state = try? enclave.loadSyncState(), state.list != nil,
                (try? enclave.status().isUnlocked) == true
            else { return nil }
            if let began = enclave.cutOffSyncRun() { return .failure(Self.syncHeld(since: began)) }
            do throws(KeychainError) {
                try enclave.beginSyncRun()
                defer { enclave.endSyncRun() }
                return .success(try syncNow(from: state))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Why keychaind does not sync by itself after a sync that began at `began` was cut off.
    static func syncHeld(since began: String) -> KeychainError {
        KeychainError(
            .errSecIO,
            "a sync that began at \(began) never ended (keychaind stopped during it), so keychaind does not sync by "
                + "itself until you run `keychainctl sync now`")
    }

    func transport(_ remote: String) -> any SyncTransport {
        syncTransports.withLock { $0 }(remote, enclave.directoryURL.appendingPathComponent(Self.syncCloneName))
    }

    /// The default transport: git, with keychaind's `HOME` and `SSH_AUTH_SOCK` for an ssh remote;
    /// for a network remote, confined to `directory` and reading nothing else beneath the
    /// directory that holds the keychain's (every user's, in the system daemon).
    @Sendable static func gitTransport(remote: String, directory: URL) -> any SyncTransport {
        var environment = ["PATH": "/usr/bin:/bin"]
        for name in ["HOME", "SSH_AUTH_SOCK"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        // A path of this machine (per-user mode alone) is written by git itself: not confined.
        let keychainParent = directory.deletingLastPathComponent().deletingLastPathComponent()
        let privateRoot = GitTransport.isLocal(remote) ? nil : keychainParent
        return GitTransport(remote: remote, directory: directory, privateRoot: privateRoot, environment: environment)
    }

    /// Refuses a remote git would take for an option (a leading `-`), one naming a transport
    /// helper (`ext::`, `fd::`: a command run, a descriptor of keychaind's read) or a scheme but
    /// `ssh`, `git`, `https` and `file` (plain `http://` among them), and in the system daemon
    /// one that is not a network remote (`ssh://`, `git://`, `https://`, or `host:path`): a path
    /// or `file://` would have keychaind, as its own user, read and write there. ``GitTransport`` refuses the same through git's protocol
    /// allow-list.
    func checkRemote(_ remote: String) throws(KeychainError) {
        guard !remote.isEmpty, !remote.hasPrefix("-"), !remote.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw KeychainError(.errSecParam, "a sync remote is a URL, user@host:path or a path, never an option")
        }
        let lowered = remote.lowercased()
        let schemes = ["ssh://", "git://", "https://", "file://"]
        guard !remote.contains("::"), !remote.contains("://") || schemes.contains(where: lowered.hasPrefix) else {
            throw KeychainError(
                .errSecParam,
                "a sync remote is reached over ssh://, https://, git://, user@host:path or a path; "
                    + "any other transport (http://, ext::, fd::…) is refused")
        }
        guard !localSyncRemotes else { return }
        guard !GitTransport.isLocal(remote) else {
            throw KeychainError(
                .errSecParam,
                "the system keychain daemon syncs with a network remote only (ssh://, git://, https:// or "
                    + "user@host:path): it would read and write a path of this machine as its own user")
        }
    }

    /// Refuses when sync is set up; otherwise removes what an earlier setup or join that failed
    /// left of a clone, which would still name its remote.
    func requireNoSync() throws(KeychainError) {
        if let state = try enclave.loadSyncState() {
            throw KeychainError(
                .errSecDuplicateItem,
                "sync is set up already, with \(GitTransport.shown(state.remote)): remove this device from the "
                    + "circle first")
        }
        removeSyncRepository()
    }

    /// Removes sync's repository of the remote, if any: it names the remote, and a new setup or
    /// join starts afresh.
    func removeSyncRepository() {
        try? FileManager.default.removeItem(at: enclave.directoryURL.appendingPathComponent(Self.syncCloneName))
    }

    private func setUpSync(remote: String, deviceName: String) throws(KeychainError) -> SyncReport {
        try checkRemote(remote)
        try requireNoSync()
        try requireUnlocked("sync makes this device's identity key")
        let identity = try enclave.makeSyncIdentity()
        let keys = try enclave.openSyncKeys(identity: identity)
        keys.startEpoch(1)
        let transport = transport(remote)
        let snapshot = try transport.fetch()
        guard snapshot.files[SyncPaths.list] == nil else {
            throw KeychainError(
                .errSecDuplicateItem,
                "\(GitTransport.shown(remote)) holds a circle already: join it (`keychainctl sync join`)")
        }
        let list = try keys.firstList(name: deviceName)
        let wrapped = try keys.wrapKey(epoch: 1, to: keys.publicKey)
        let changes: [String: [UInt8]?] = [
            SyncPaths.list: Array(list.encoded), SyncPaths.list(version: 1): Array(list.encoded),
            SyncPaths.key(epoch: 1, keys.deviceID): Array(wrapped),
        ]
        guard case .published = try transport.publish(changes, over: snapshot.token) else {
            throw KeychainError(
                .errSecIO, "\(GitTransport.shown(remote)) changed while the circle was being set up: try again")
        }
        var state = SyncState(remote: remote, deviceName: deviceName, identity: identity, list: list.encoded)
        state.wrappedKeys[1] = wrapped
        try enclave.saveSyncState(state)
        return try syncNow()
    }

    private func removeDevice(_ prefix: String) throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list != nil else { throw Self.notAMember }
        let keys = try openKeys(state)
        _ = try changeCircle(&state, keys) { (snapshot, list) throws(KeychainError) in
            let matching = list.members.filter { SyncPaths.hex($0.id).hasPrefix(prefix.lowercased()) }
            guard prefix.count >= 4, matching.count == 1, let removed = matching.first else {
                throw KeychainError(
                    .errSecItemNotFound,
                    "no one device of the circle has an id starting with \(prefix): `keychainctl sync devices` "
                        + "lists them")
            }
            guard removed.id != keys.deviceID else {
                throw KeychainError(.errSecParam, "a device is removed from another device of the circle")
            }
            // A new epoch whose key the removed device never gets.
            let epoch = list.epoch + 1
            keys.startEpoch(epoch)
            let members = list.members.filter { $0.id != removed.id }
            let next = try keys.nextList(after: list, members: members, epoch: epoch)
            var changes: [String: [UInt8]?] = [SyncPaths.list: Array(next.encoded)]
            for member in members {
                changes[SyncPaths.key(epoch: epoch, member.id)] = Array(
                    try keys.wrapKey(epoch: epoch, to: member.publicKey))
            }
            // Its folder, its key wraps and any request of its go.
            for path in snapshot.files.keys
            where path.hasPrefix(SyncPaths.folder(removed.id)) || path.hasPrefix(SyncPaths.answers(to: removed.id))
                || path.hasSuffix("/" + SyncPaths.hex(removed.id))
            {
                changes[path] = .some(nil)
            }
            return (next, changes)
        }
        return try syncNow()
    }

    /// Changes the circle as one of its members: fetches, takes the remote's list, lets `change`
    /// make the next list and what to write with it, and publishes; from the fetch again when the
    /// remote moved on meanwhile. Returns the state it published over.
    func changeCircle(
        _ state: inout SyncState, _ keys: SyncCircleKeys,
        _ change: (SyncSnapshot, SyncDeviceList) throws(KeychainError) -> (
            next: SyncDeviceList, changes: [String: [UInt8]?]
        )
    ) throws(KeychainError) -> SyncSnapshot {
        let transport = transport(state.remote)
        for _ in 0..<Self.syncAttempts {
            let snapshot = try transport.fetch()
            var refused: [String] = []
            var (next, changes) = try change(snapshot, try acceptList(snapshot, &state, keys, &refused))
            changes[SyncPaths.list(version: next.version)] = Array(next.encoded)
            guard case .published = try transport.publish(changes, over: snapshot.token) else { continue }
            state.hold(next.encoded)
            if let wrapped = changes[SyncPaths.key(epoch: next.epoch, keys.deviceID)] ?? nil {
                state.wrappedKeys[next.epoch] = Data(wrapped)
            }
            try enclave.saveSyncState(state)
            return snapshot
        }
        throw KeychainError(.errSecIO, "\(GitTransport.shown(state.remote)) kept changing: try again")
    }

    static let notAMember = KeychainError(
        .errSecParam, "this device is in no circle: `keychainctl sync setup` or `keychainctl sync join` first")

    /// Takes every sync key of `list`'s epochs that the remote holds wrapped to this device and
    /// `keys` does not hold yet, keeping each in `state`; a wrap that does not open goes in
    /// `refused`.
    func takeEpochKeys(
        _ snapshot: SyncSnapshot, _ list: SyncDeviceList, _ keys: SyncCircleKeys, _ state: inout SyncState,
        _ refused: inout [String]
    ) {
        for epoch in 1...max(list.epoch, 1) where !keys.epochs.contains(epoch) {
            guard let wrapped = snapshot.files[SyncPaths.key(epoch: epoch, keys.deviceID)] else { continue }
            do throws(KeychainError) {
                try keys.takeWrappedKey(Data(wrapped), epoch: epoch)
                state.wrappedKeys[epoch] = Data(wrapped)
            } catch {
                refused.append(error.message)
            }
        }
    }

    /// This device's keys, with every sync key wrapped to it that it has kept.
    func openKeys(_ state: SyncState) throws(KeychainError) -> SyncCircleKeys {
        let keys = try enclave.openSyncKeys(identity: state.identity)
        for (epoch, wrapped) in state.wrappedKeys { try keys.takeWrappedKey(wrapped, epoch: epoch) }
        return keys
    }

    /// What `sync status` and `sync devices` show: the devices asking to join as `snapshot`
    /// holds them, or as a fetch finds them when none is given; `keys`, when the caller has
    /// them open already. The remote is shown without a password it may carry.
    func syncReport(
        _ state: SyncState?, snapshot: SyncSnapshot? = nil, keys opened: SyncCircleKeys? = nil
    ) throws(KeychainError) -> SyncReport {
        guard let state else { return SyncReport(membership: .none) }
        let keys = if let opened { opened } else { try enclave.openSyncKeys(identity: state.identity) }
        var report = SyncReport(
            membership: state.list == nil ? .waitingForApproval : .member, remote: GitTransport.shown(state.remote),
            lastSync: state.lastSync, failingSince: state.failingSince, lastError: state.lastError,
            published: state.lastPublished, applied: state.lastApplied, refused: state.lastRefused,
            wentBack: state.wentBack)
        if let held = state.list {
            let list = try SyncDeviceList.decode(held)
            report.epoch = list.epoch
            report.members = list.members.map {
                SyncReport.Device(
                    id: SyncPaths.hex($0.id), name: $0.name, code: nil, isThisDevice: $0.id == keys.deviceID)
            }
            if let snapshot = snapshot ?? (try? transport(state.remote).fetch()) {
                report.requests = Self.requestsToJoin(snapshot, list).map {
                    SyncReport.Device(id: SyncPaths.hex($0.member.id), name: $0.name, code: nil, isThisDevice: false)
                }
            }
        } else {
            let shown = joinCode(state, keys)
            report.members = try Self.offeredMembers(state).map { member in
                SyncReport.Device(
                    id: SyncPaths.hex(member.id), name: member.name, code: shown?.member == member ? shown?.code : nil,
                    isThisDevice: false)
            }
            report.requests = [
                SyncReport.Device(
                    id: SyncPaths.hex(keys.deviceID), name: state.deviceName, code: nil, isThisDevice: true)
            ]
        }
        return report
    }
}
