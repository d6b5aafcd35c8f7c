import Crypto
import Enclave
import Foundation
import KeychainProtocol
import KeychainStore
import KeychainSync

/// A synchronizable item of this keychain, as one sync sees it.
struct LocalSyncItem {
    var row: StoredRow
    /// ``KeychainServer/syncDigest(_:)`` of its row.
    var digest: Data
    /// When it was last changed here (its modification date); nil when the sync had no need to
    /// open it.
    var modified: Date?
}

/// One member's version of an item on the remote: not opened until it is applied.
struct RemoteVersion {
    var clock: SyncTimestamp
    var bytes: Data
    /// The writer's identity key (X9.63).
    var writer: Data
}

/// One sync (Docs/Sync.md): fetch, check every member's head and records, decide each item by
/// its clock, apply what other devices wrote in one transaction, publish what this one
/// changed, and start again from the fetch when the remote moved on meanwhile.
extension KeychainServer {
    /// Syncs now, from the state `loaded` (read from its file when nil).
    ///
    /// - Throws: `errSecInteractionNotAllowed` while locked or waiting for approval; `errSecIO`
    ///   when the remote cannot be reached (local writes go on; `sync status` says since when);
    ///   `errSecAuthFailed` for a device removed from its circle.
    func syncNow(from loaded: SyncState? = nil) throws(KeychainError) -> SyncReport {
        let found: SyncState? = if let loaded { loaded } else { try enclave.loadSyncState() }
        guard var state = found else { throw Self.notAMember }
        guard state.list != nil else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "this device waits to be approved: confirm the code with `keychainctl sync join --code CODE`")
        }
        do throws(KeychainError) {
            try requireUnlocked("sync reads and writes synchronizable items")
            let keys = try openKeys(state)
            let transport = transport(state.remote)
            for _ in 0..<Self.syncAttempts {
                if let report = try syncOnce(&state, keys, transport) { return report }
            }
            throw KeychainError(
                .errSecIO, "\(GitTransport.shown(state.remote)) kept changing during the sync: it is tried again later")
        } catch {
            state.failingSince = state.failingSince ?? Date()
            state.lastError = error.message
            try? enclave.saveSyncState(state)
            throw error
        }
    }

    /// One pass; nil when the remote moved on before the publish (fetch again).
    private func syncOnce(
        _ state: inout SyncState, _ keys: SyncCircleKeys, _ transport: any SyncTransport
    ) throws(KeychainError) -> SyncReport? {
        let snapshot = try transport.fetch()
        var refused: [String] = []
        let list = try acceptList(snapshot, &state, keys, &refused)
        guard list.members.contains(where: { $0.id == keys.deviceID }) else {
            throw KeychainError(
                .errSecAuthFailed,
                "this device was removed from the circle: its items stay here, and nothing syncs any more")
        }
        takeEpochKeys(snapshot, list, keys, &state, &refused)
        guard keys.epochs.contains(list.epoch) else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "this device has not been given the circle's sync key of epoch \(list.epoch) yet")
        }

        // What the other members wrote: each member's folder is taken whole, or not at all.
        var remote: [Data: RemoteVersion] = [:]
        for member in list.members where member.id != keys.deviceID {
            do throws(KeychainError) {
                try readFolder(member, snapshot, &state, into: &remote)
            } catch {
                refused.append("\(member.name) (\(SyncPaths.hex(member.id).prefix(8))): \(error.message)")
            }
        }

        // What changed here, and which version of each item wins.
        var clock = HybridLogicalClock(device: keys.deviceID, last: state.clock.flatMap { SyncTimestamp($0) })
        let now = Self.milliseconds(Date())
        let local = try readLocalItems(keys, state)
        let members = Set(list.members.map(\.id))
        var incoming: [(name: Data, version: RemoteVersion, here: LocalSyncItem?)] = []
        var outgoing: [(name: Data, clock: SyncTimestamp, here: LocalSyncItem?, wins: Bool, held: SyncTimestamp?)] = []
        let names = Set(remote.keys).union(local.keys).union(state.items.keys.compactMap { SyncPaths.bytes($0) })
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let known = state.items[SyncPaths.hex(name)]
            let knownClock = known.flatMap { SyncTimestamp($0.clock) }
            let here = local[name]
            var change: SyncTimestamp?
            if let here, known?.row != here.digest {
                change = clock.tick(now: here.modified.map(Self.milliseconds) ?? now)
            } else if here == nil, known?.row != nil {
                change = clock.tick(now: now)
            } else if here != nil, let knownClock, !members.contains(knownClock.device) {
                // Last written by a device that left: this one publishes it again, under the
                // current key.
                change = clock.tick(now: now)
            }
            let newer = remote[name].flatMap { version in knownClock.map { version.clock > $0 } ?? true ? version : nil
            }
            if let change, newer.map({ change > $0.clock }) ?? true {
                outgoing.append((name, change, here, true, knownClock))
            } else if let newer {
                incoming.append((name, newer, here))
                // The version this device loses stays on the remote, in its own folder.
                if let change { outgoing.append((name, change, here, false, knownClock)) }
            }
        }

        let wentBack = republishWhatTheRemoteLost(snapshot, keys, local, &outgoing, &state)

        // Sealed before anything is applied: a losing version is the item as it is here.
        var changes: [String: [UInt8]?] = [:]
        var published = state.published
        try enclave.inItemRequest { () throws(KeychainError) in
            for entry in outgoing {
                let content = try entry.here.map { (item: LocalSyncItem) throws(KeychainError) in
                    try syncContent(item.row)
                }
                let bytes = try keys.seal(
                    content ?? .tombstone,
                    kept: keptVersions(snapshot, keys, entry.name, held: entry.held, now: now),
                    name: entry.name, clock: entry.clock, epoch: list.epoch)
                changes[SyncPaths.record(keys.deviceID, entry.name)] = Array(bytes)
                published[SyncPaths.hex(entry.name)] = entry.clock.encoded
            }
        }

        // A file of this device's folder it does not know it wrote (a publish whose end it did
        // not see: it was killed) goes, so that its head lists exactly what the folder holds.
        let folder = SyncPaths.folder(keys.deviceID)
        for path in snapshot.files.keys where path.hasPrefix(folder) && path != SyncPaths.head(keys.deviceID) {
            if published[String(path.dropFirst(folder.count))] == nil { changes[path] = .some(nil) }
        }

        let applied = try apply(incoming, keys, &state, &refused)
        for version in remote.values { clock.observe(version.clock, now: now) }
        state.clock = clock.last.encoded
        // What was applied is kept at once: a sync killed before its end does not take those
        // items for changes of this device's.
        if applied > 0 { try enclave.saveSyncState(state) }

        if !changes.isEmpty || wentBack || (snapshot.files[SyncPaths.head(keys.deviceID)] == nil && state.sequence == 0) {
            let digest = SyncHead.digest(
                of: published.compactMap { name, clock in
                    guard let name = SyncPaths.bytes(name), let clock = SyncTimestamp(clock) else { return nil }
                    return (name, clock)
                })
            let head = try keys.head(sequence: state.sequence + 1, digest: digest)
            changes[SyncPaths.head(keys.deviceID)] = Array(head.encoded)
            guard case .published = try transport.publish(changes, over: snapshot.token) else { return nil }
            state.sequence += 1
            state.published = published
            for entry in outgoing where entry.wins {
                state.items[SyncPaths.hex(entry.name)] = SyncState.Item(
                    row: entry.here?.digest, clock: entry.clock.encoded)
            }
        }
        state.lastSync = Date()
        state.failingSince = nil
        state.lastError = nil
        state.lastPublished = outgoing.count
        state.lastApplied = applied
        state.lastRefused = refused
        try enclave.saveSyncState(state)
        return try syncReport(state, snapshot: snapshot, keys: keys)
    }

    /// When the remote went back (reset, or an older copy put back) to before this device's last
    /// publish — its own head there is older than the sequence it reached, or gone — every record
    /// it published whose version is still the item's goes up again as it was (same clock), and
    /// its head above the sequence it reached, so that the others, which refuse a folder older
    /// than one they saw, take it again. A record whose item another device has changed since is
    /// left out: the winning version is in that device's folder. `sync status` says so. True
    /// when the remote went back.
    private func republishWhatTheRemoteLost(
        _ snapshot: SyncSnapshot, _ keys: SyncCircleKeys, _ local: [Data: LocalSyncItem],
        _ outgoing: inout [(name: Data, clock: SyncTimestamp, here: LocalSyncItem?, wins: Bool, held: SyncTimestamp?)],
        _ state: inout SyncState
    ) -> Bool {
        let own = snapshot.files[SyncPaths.head(keys.deviceID)].flatMap {
            try? SyncHead.decode(Data($0), writer: keys.publicKey)
        }
        guard state.sequence > 0, (own?.sequence ?? 0) < state.sequence else { return false }
        let pending = Set(outgoing.map(\.name))
        var republished = 0
        for (hex, clockBytes) in state.published {
            guard let name = SyncPaths.bytes(hex), !pending.contains(name), let clock = SyncTimestamp(clockBytes) else {
                continue
            }
            guard state.items[hex]?.clock == clockBytes else {
                state.published[hex] = nil
                continue
            }
            outgoing.append((name, clock, local[name], false, nil))
            republished += 1
        }
        state.wentBack =
            "\(ISO8601DateFormatter().string(from: Date())): the remote held this device's folder at sequence "
            + "\(own?.sequence ?? 0), older than the \(state.sequence) it published; \(republished) records published again"
        return true
    }

    /// The versions this device's next record of `name` carries: the one its folder holds now,
    /// when that version lost to the one the keychain holds (`held`), and those it carried
    /// itself, each for ``SyncRecord/keptFor`` after the change that beat it.
    private func keptVersions(
        _ snapshot: SyncSnapshot, _ keys: SyncCircleKeys, _ name: Data, held: SyncTimestamp?, now: UInt64
    ) -> [SyncRecord.Kept] {
        guard let bytes = snapshot.files[SyncPaths.record(keys.deviceID, name)],
            let previous = try? keys.open(Data(bytes), name: name, writer: keys.publicKey)
        else { return [] }
        var kept = previous.kept.filter { $0.beatenAt + SyncRecord.keptFor > now }
        if let held, previous.clock < held, held.milliseconds + SyncRecord.keptFor > now,
            case .item(let itemClass, let attributes, let secret) = previous.content
        {
            kept.append(
                SyncRecord.Kept(
                    clock: previous.clock, beatenAt: held.milliseconds, itemClass: itemClass, attributes: attributes,
                    secret: secret))
        }
        return kept
    }

    /// Checks one member's folder: its head signed by it and not older than one seen, and
    /// records that are exactly those its head lists (so a record put back older, under the
    /// head that lists the newer one, does not match). Puts each record that is the latest seen
    /// for its name in `remote`.
    ///
    /// - Throws: `errSecDecode`, naming what is wrong, and takes nothing of the folder.
    private func readFolder(
        _ member: SyncDeviceList.Member, _ snapshot: SyncSnapshot, _ state: inout SyncState,
        into remote: inout [Data: RemoteVersion]
    ) throws(KeychainError) {
        let folder = SyncPaths.folder(member.id)
        let hex = SyncPaths.hex(member.id)
        let files = snapshot.files.filter { $0.key.hasPrefix(folder) }
        guard let headBytes = files[SyncPaths.head(member.id)] else {
            guard files.isEmpty, state.heads[hex] == nil else {
                throw KeychainError(.errSecDecode, "its head is missing from the remote")
            }
            return
        }
        let head = try SyncHead.decode(Data(headBytes), writer: member.publicKey)
        let seenSequence = state.heads[hex] ?? 0
        guard head.sequence >= seenSequence else {
            throw KeychainError(
                .errSecDecode,
                "its head on the remote (sequence \(head.sequence)) is older than one this device has seen "
                    + "(\(seenSequence)): the remote was rolled back")
        }
        var versions: [(name: Data, version: RemoteVersion)] = []
        for (path, bytes) in files where path != SyncPaths.head(member.id) {
            guard let name = SyncPaths.bytes(String(path.dropFirst(folder.count))), name.count == 16 else {
                throw KeychainError(.errSecDecode, "\(path) on the remote is not a record")
            }
            let record = try SyncRecord.decode(Data(bytes))
            guard record.name == name, record.clock.device == member.id else {
                throw KeychainError(.errSecDecode, "a record was moved to another name or device on the remote")
            }
            versions.append((name, RemoteVersion(clock: record.clock, bytes: Data(bytes), writer: member.publicKey)))
        }
        guard SyncHead.digest(of: versions.map { ($0.name, $0.version.clock) }) == head.digest else {
            throw KeychainError(
                .errSecDecode,
                "its records on the remote are not those its head lists: one was removed, added or held back")
        }
        state.heads[hex] = head.sequence
        for (name, version) in versions {
            if remote[name].map({ version.clock > $0.clock }) ?? true { remote[name] = version }
        }
    }

    /// Every synchronizable item of this keychain, by record name.
    private func readLocalItems(
        _ keys: SyncCircleKeys, _ state: SyncState
    ) throws(KeychainError) -> [Data: LocalSyncItem] {
        let rows = try store.read { transaction in
            var rows: [StoredRow] = []
            for itemClass in ItemClass.allCases where itemClass.isImplemented {
                rows += try transaction.rows(
                    RowFilter(itemClass: itemClass.rawValue, accessGroupHashes: nil, synchronizable: true))
            }
            return rows
        }
        var known: [Data: Data] = [:]
        for (name, item) in state.items {
            if let row = item.row, let name = SyncPaths.bytes(name) { known[row] = name }
        }
        var items: [Data: LocalSyncItem] = [:]
        try enclave.inItemRequest { () throws(KeychainError) in
            for row in rows {
                let digest = Self.syncDigest(row)
                if let name = known[digest] {
                    items[name] = LocalSyncItem(row: row, digest: digest, modified: nil)
                    continue
                }
                let item = try open(row)
                guard let itemClass = ItemClass(rawValue: row.itemClass), item.binding.accessControl == nil,
                    !item.binding.accessibility.isThisDeviceOnly, item.record.attributes["tkid"] == nil
                else { continue }
                let name = try keys.recordName(Self.syncIdentity(itemClass, item.record))
                items[name] = LocalSyncItem(row: row, digest: digest, modified: Self.modified(item.record))
            }
        }
        return items
    }

    /// An item's content for its record: its class, attributes and secret.
    private func syncContent(_ row: StoredRow) throws(KeychainError) -> SyncRecord.Content {
        let item = try open(row)
        let secret = try enclave.openSecret(
            SealedItem(metadata: row.metadata, wrappedKey: row.wrappedKey, secret: row.secret), binding: item.binding)
        return .item(itemClass: row.itemClass, attributes: item.record.encoded(), secret: secret)
    }

    /// Opens, checks and applies the versions other devices wrote, in one transaction. A
    /// version that does not open, or is not an item this keychain can take, is refused, and
    /// leaves its item as it is. An item changed here while the sync ran is left for the next.
    ///
    /// - Returns: how many items changed.
    private func apply(
        _ incoming: [(name: Data, version: RemoteVersion, here: LocalSyncItem?)], _ keys: SyncCircleKeys,
        _ state: inout SyncState, _ refused: inout [String]
    ) throws(KeychainError) -> Int {
        var writes: [(name: Data, clock: SyncTimestamp, here: LocalSyncItem?, row: StoredRow?, hashes: [Data])] = []
        try enclave.inItemRequest { () throws(KeychainError) in
            for (name, version, here) in incoming {
                do throws(KeychainError) {
                    let opened = try keys.open(version.bytes, name: name, writer: version.writer)
                    guard case .item(let itemClass, let attributes, let secret) = opened.content else {
                        writes.append((name, opened.clock, here, nil, []))
                        continue
                    }
                    let item = try RestoredItem(
                        BackupItem(itemClass: itemClass, attributes: attributes, secret: secret, accessControl: nil),
                        sealedToDevice: false)
                    guard case .bool(true)? = item.record.attributes[CommonAttribute.synchronizable],
                        try keys.recordName(Self.syncIdentity(item.itemClass, item.record)) == name
                    else {
                        throw KeychainError(.errSecDecode, "a record holds an item that is not the one its name is")
                    }
                    let sealed = try seal(
                        item.record, secret: item.secret, itemClass: item.itemClass,
                        identity: here?.row.identity ?? SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) },
                        version: (here?.row.version ?? 0) + 1, accessControl: nil, applicationPassword: nil)
                    writes.append((name, opened.clock, here, sealed.row, sealed.hashes))
                } catch {
                    refused.append(error.message)
                }
            }
        }
        let written = try store.write { transaction in
            var written: [(name: Data, clock: SyncTimestamp, row: Data?)] = []
            for write in writes {
                let pk = write.row?.primaryKeyHash ?? write.here?.row.primaryKeyHash
                let current = try pk.map {
                    try transaction.rows(
                        RowFilter(
                            itemClass: write.row?.itemClass ?? write.here?.row.itemClass ?? "",
                            accessGroupHashes: nil, synchronizable: true, primaryKeyHashes: [$0]))
                }?.first
                // Changed here since it was read: the next sync decides it.
                guard current.map(Self.syncDigest) == write.here?.digest else { continue }
                switch (current?.id, write.row) {
                case (let id?, let row?): try transaction.replace(id, with: row, attributeHashes: write.hashes)
                case (let id?, nil): try transaction.delete([id])
                case (nil, let row?): _ = try transaction.insert(row, attributeHashes: write.hashes)
                case (nil, nil): break
                }
                written.append((write.name, write.clock, write.row.map(Self.syncDigest)))
            }
            return written
        }
        for (name, clock, row) in written {
            state.items[SyncPaths.hex(name)] = SyncState.Item(row: row, clock: clock.encoded)
        }
        return written.count
    }

    /// A digest of a row as stored: another digest means the item changed.
    static func syncDigest(_ row: StoredRow) -> Data {
        var hash = SHA256()
        hash.update(data: row.metadata)
        hash.update(data: row.wrappedKey)
        hash.update(data: row.secret)
        return Data(hash.finalize().prefix(16))
    }

    /// What names an item across the circle: its class, access group and primary key.
    static func syncIdentity(_ itemClass: ItemClass, _ record: ItemRecord) -> Data {
        var fields = [
            Data(itemClass.rawValue.utf8), record.attributes[CommonAttribute.accessGroup]?.canonicalBytes ?? Data(),
        ]
        for name in itemClass.primaryKey
        where name != CommonAttribute.accessGroup && name != CommonAttribute.synchronizable {
            fields.append(Data(name.utf8))
            fields.append(record.attributes[name]?.canonicalBytes ?? Data())
        }
        return LengthPrefixed.encode(label: "swift-keychain sync item v1", fields)
    }

    /// `date` in milliseconds since 1970 for a clock's 48 bits: before 1970 is 0, beyond the
    /// clock's range its last millisecond. Total: a date restored from a file or synced in can be
    /// anything a decoder let through, and `UInt64(_:)` of a Double out of range traps (issue 52:
    /// one restored date stopped the system daemon at every sync).
    static func milliseconds(_ date: Date) -> UInt64 {
        let latest: UInt64 = (1 << 48) - 1
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(latest) ? latest : UInt64(exactly: value) ?? latest
    }
}
