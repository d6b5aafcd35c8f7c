import Enclave
import Foundation
import KeychainProtocol

/// The versions that lost a conflict (Docs/Sync.md, "Conflicts"): each stays on the remote in
/// the folder of the device that wrote it, until that device next changes the item.
extension KeychainServer {
    /// The most kept versions one answer carries, the latest first.
    static let maximumKeptVersions = 100

    /// Every version on the remote older than the one this keychain holds of its item, opened,
    /// with its writer's name and when it was made. A version that does not open as its writer's
    /// is left out.
    func syncHistory() throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list != nil else { throw Self.notAMember }
        try requireUnlocked("the kept versions are opened")
        let keys = try openKeys(state)
        let snapshot = try transport(state.remote).fetch()
        var refused: [String] = []
        let list = try acceptList(snapshot, &state, keys, &refused)
        for epoch in 1...max(list.epoch, 1) where !keys.epochs.contains(epoch) {
            if let wrapped = snapshot.files[SyncPaths.key(epoch: epoch, keys.deviceID)] {
                try? keys.takeWrappedKey(Data(wrapped), epoch: epoch)
            }
        }
        var kept: [SyncReport.KeptVersion] = []
        for member in list.members {
            let folder = SyncPaths.folder(member.id)
            for (path, bytes) in snapshot.files where path.hasPrefix(folder) && path != SyncPaths.head(member.id) {
                let nameHex = String(path.dropFirst(folder.count))
                guard let name = SyncPaths.bytes(nameHex), let record = try? SyncRecord.decode(Data(bytes)),
                    let current = state.items[nameHex].flatMap({ SyncTimestamp($0.clock) }), record.clock < current,
                    let opened = try? keys.open(Data(bytes), name: name, writer: member.publicKey),
                    case .item(let itemClass, let attributes, let secret) = opened.content,
                    let item = try? ItemRecord.decode(attributes)
                else { continue }
                func text(_ name: String) -> String {
                    guard case .string(let value)? = item.attributes[name] else { return "" }
                    return value
                }
                kept.append(
                    SyncReport.KeptVersion(
                        itemClass: itemClass,
                        service: itemClass == ItemClass.internetPassword.rawValue
                            ? text("srvr") : text("svce"),
                        account: text("acct"), device: member.name,
                        changed: Date(timeIntervalSince1970: Double(opened.clock.milliseconds) / 1000), secret: secret))
            }
        }
        var report = try syncReport(state, snapshot: snapshot)
        report.kept = Array(kept.sorted { $0.changed > $1.changed }.prefix(Self.maximumKeptVersions))
        return report
    }
}
