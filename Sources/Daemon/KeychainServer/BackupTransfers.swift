import Enclave
import KeychainProtocol
import KeychainStore
import Synchronization

/// The backups and restores under way, one of each at most per connection: a request takes its
/// run out, works on it, and puts it back unless it ended or failed, so a failed step ends the
/// run and two requests never work on one at once. A closed connection's are dropped.
final class BackupTransfers: Sendable {
    /// A backup under way: the rows as they were when it began, how far it came, and the file's
    /// writer.
    struct Backup: Sendable {
        var writer: BackupWriter
        var rows: [StoredRow]
        var next = 0
        var summary = BackupSummary(migratable: 0, thisDeviceOnly: 0, leftOut: 0)
    }

    /// A restore under way: the file's reader, the records read so far, and the rule for items
    /// the keychain holds already.
    struct Restore: Sendable {
        var reader: BackupReader
        var replacing: Bool
        var records: [BackupRecord] = []
    }

    private let backups = Mutex<[UInt64: Backup]>([:])
    private let restores = Mutex<[UInt64: Restore]>([:])

    func put(_ backup: Backup, _ connection: UInt64) { backups.withLock { $0[connection] = backup } }
    func put(_ restore: Restore, _ connection: UInt64) { restores.withLock { $0[connection] = restore } }
    func takeBackup(_ connection: UInt64) -> Backup? { backups.withLock { $0.removeValue(forKey: connection) } }
    func takeRestore(_ connection: UInt64) -> Restore? { restores.withLock { $0.removeValue(forKey: connection) } }

    /// Drops what `connection` had under way.
    func end(_ connection: UInt64) {
        _ = takeBackup(connection)
        _ = takeRestore(connection)
    }
}
