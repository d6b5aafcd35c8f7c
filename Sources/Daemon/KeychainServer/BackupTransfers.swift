import Enclave
import KeychainProtocol
import KeychainStore
import Synchronization

/// The backups and restores under way, one of each at most per connection, and one restore at
/// most in the keychain (a restore derives a key with 128 MiB of scrypt before the file is
/// authenticated, and holds its items in memory until it ends: four at once took keychaind to
/// 4 GiB). A request takes its run out, works on it, and puts it back unless it ended or failed,
/// so a failed step ends the run and two requests never work on one at once. A closed
/// connection's are dropped.
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
    /// The connection whose restore is under way, from its beginning to its end or failure.
    private let restoring = Mutex<UInt64?>(nil)

    func put(_ backup: Backup, _ connection: UInt64) { backups.withLock { $0[connection] = backup } }
    func put(_ restore: Restore, _ connection: UInt64) { restores.withLock { $0[connection] = restore } }

    /// Begins `restore` for `connection`.
    ///
    /// - Throws: `errSecBadReq` while another connection's restore is under way.
    func begin(_ restore: Restore, _ connection: UInt64) throws(KeychainError) {
        try restoring.withLock { current throws(KeychainError) in
            guard current == nil || current == connection else {
                throw KeychainError(
                    .errSecBadReq, "another restore into this keychain is under way; restores run one at a time")
            }
            current = connection
        }
        put(restore, connection)
    }

    /// Ends `connection`'s restore, whether it finished or failed.
    func endRestore(_ connection: UInt64) {
        _ = takeRestore(connection)
        restoring.withLock { if $0 == connection { $0 = nil } }
    }
    func takeBackup(_ connection: UInt64) -> Backup? { backups.withLock { $0.removeValue(forKey: connection) } }
    func takeRestore(_ connection: UInt64) -> Restore? { restores.withLock { $0.removeValue(forKey: connection) } }

    /// Drops what `connection` had under way.
    func end(_ connection: UInt64) {
        _ = takeBackup(connection)
        endRestore(connection)
    }
}
