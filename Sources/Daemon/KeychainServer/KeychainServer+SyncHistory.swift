import Enclave
import Foundation
import KeychainProtocol

/// The versions that lost a conflict (Docs/Sync.md, "Conflicts"): each stays on the remote in
/// the folder of the device that wrote it, and once that device changes the item again, inside
/// its next record, for 30 days after the change that beat it.
extension KeychainServer {
    /// The most kept versions one answer carries, the latest first.
    static let maximumKeptVersions = 100

    /// Every version on the remote that lost to the one this keychain holds of its item: a
    /// member's record older than that, and the versions each record carries for 30 days after
    /// the change that beat them; opened, with its writer's name and when it was made. A record
    /// that does not open as its writer's is left out.
    func syncHistory() throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list != nil else { throw Self.notAMember }
        try requireUnlocked("the kept versions are opened")
        let keys = try openKeys(state)
        let snapshot = try transport(state.remote).fetch()
        var refused: [String] = []
        let list = try acceptList(snapshot, &state, keys, &refused)
        takeEpochKeys(snapshot, list, keys, &state, &refused)
        let now = Self.milliseconds(Date())
        var kept: [SyncReport.KeptVersion] = []
        func keep(
            _ itemClass: String, _ attributes: Data, _ secret: SecretBytes, by device: String, at clock: SyncTimestamp
        ) {
            guard let item = try? ItemRecord.decode(attributes) else { return }
            func text(_ name: String) -> String {
                guard case .string(let value)? = item.attributes[name] else { return "" }
                return value
            }
            kept.append(
                SyncReport.KeptVersion(
                    itemClass: itemClass,
                    service: itemClass == ItemClass.internetPassword.rawValue ? text("srvr") : text("svce"),
                    account: text("acct"), device: device,
                    changed: Date(timeIntervalSince1970: Double(clock.milliseconds) / 1000), secret: secret))
        }
        for member in list.members {
            let folder = SyncPaths.folder(member.id)
            for (path, bytes) in snapshot.files where path.hasPrefix(folder) && path != SyncPaths.head(member.id) {
                let nameHex = String(path.dropFirst(folder.count))
                guard let name = SyncPaths.bytes(nameHex),
                    let opened = try? keys.open(Data(bytes), name: name, writer: member.publicKey)
                else { continue }
                // The record itself, when it lost to the version this keychain holds.
                if let current = state.items[nameHex].flatMap({ SyncTimestamp($0.clock) }), opened.clock < current,
                    case .item(let itemClass, let attributes, let secret) = opened.content
                {
                    keep(itemClass, attributes, secret, by: member.name, at: opened.clock)
                }
                // The versions its writer lost earlier and still carries.
                for version in opened.kept where version.beatenAt + SyncRecord.keptFor > now {
                    keep(version.itemClass, version.attributes, version.secret, by: member.name, at: version.clock)
                }
            }
        }
        var report = try syncReport(state, snapshot: snapshot, keys: keys)
        report.kept = Array(kept.sorted { $0.changed > $1.changed }.prefix(Self.maximumKeptVersions))
        return report
    }
}
