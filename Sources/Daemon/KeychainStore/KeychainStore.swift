import Foundation
import GRDB
import KeychainProtocol
import StorageContracts

#if canImport(Glibc)
import Glibc
#endif

/// The keychain database: one SQLite file of sealed rows, in WAL mode with `secure_delete`, so
/// that deleted rows are overwritten and a process killed mid-write leaves either the whole
/// transaction or none of it.
///
/// The store never sees a key or a plaintext: it indexes keyed hashes and keeps ciphertexts.
///
/// Schema version 2. Table `meta` holds `schemaVersion`, `keychainID` (the keybag the rows were
/// sealed under), `generation`, which every write transaction raises by one, and `rowLedger`
/// (``RowLedger``); after each commit the store reports the new generation, so that the Enclave
/// can tell later whether committed transactions went missing (``DatabaseIdentity``). Version 1
/// had no row versions and no ledger; it is upgraded in place when opened (its rows keep
/// version 0, and its ledger is made by its first write).
public final class KeychainStore: Sendable {
    /// GRDB's pool: its single writer does every write. Reads use ``readers``.
    private let pool: DatabasePool
    /// The store's read-only connections.
    private let readers: ReadConnections
    private let committed: @Sendable (UInt64) -> Void
    private let ledger: RowLedger
    /// Concurrent writes share a transaction and its fsync.
    private let groupCommit = GroupCommit()
    /// The database file.
    public let url: URL

    static let schemaVersion = "2"
    private static let readableSchemaVersions: Set<String> = ["1", "2"]

    /// Opens (or creates, mode 0600) the database at `url`. The caller has checked the file
    /// against the keybag first (``inspect(_:)``).
    ///
    /// - Parameters:
    ///   - ledger: the Enclave, which keys the row ledger.
    ///   - committed: called after every write transaction with the database's new generation.
    /// - Throws: `errSecDecode` when the file is not a keychain database or is damaged (the
    ///   file is left untouched), `errSecIO` when it cannot be opened.
    public init(
        url: URL, ledger: any RowLedgerAuthority, committed: @escaping @Sendable (UInt64) -> Void = { _ in }
    ) throws(KeychainError) {
        self.url = url
        self.committed = committed
        self.ledger = RowLedger(authority: ledger, url: url)
        self.readers = ReadConnections(path: url.path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Deleted content is zeroed on disk, not left in free pages; the WAL does not keep
            // old frames beyond 1 MiB after a checkpoint.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "PRAGMA journal_size_limit = 1048576")
        }
        do {
            if !FileManager.default.fileExists(atPath: url.path) {
                let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                if fd >= 0 { close(fd) }
            }
            pool = try Self.openPool(url, configuration)
            // An acknowledged write is on disk, even across a power cut. Set after opening:
            // GRDB's pool sets NORMAL when it enables WAL, and it has a single writer connection.
            try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            try pool.write { db in
                // Schema 1 to 2: rows get their version column (0 for rows sealed without one).
                guard try db.tableExists("items"),
                    try !db.columns(in: "items").contains(where: { $0.name == "version" })
                else { return }
                try db.execute(sql: "ALTER TABLE items ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
                try db.execute(sql: "UPDATE meta SET value = '\(Self.schemaVersion)' WHERE key = 'schemaVersion'")
            }
        } catch let error as DatabaseError {
            throw Self.map(error, url: url)
        } catch {
            throw KeychainError(.errSecIO, "cannot open the keychain database \(url.path): \(error)")
        }
    }

    /// Opens the pool, retrying for up to 10 seconds while another process holds a lock that
    /// SQLite reports without waiting (switching to WAL mode, or recovering a log another
    /// connection is checkpointing, answers `SQLITE_BUSY` at once rather than through the busy
    /// timeout): a caller who only waited for another writer never sees "database is locked".
    private static func openPool(_ url: URL, _ configuration: Configuration) throws -> DatabasePool {
        let deadline = Date().addingTimeInterval(10)
        var pause: UInt32 = 1_000
        while true {
            do {
                return try DatabasePool(path: url.path, configuration: configuration)
            } catch let error as DatabaseError
                where [.SQLITE_BUSY, .SQLITE_LOCKED].contains(error.resultCode) && Date() < deadline
            {
                usleep(pause)
                pause = min(pause * 2, 100_000)
            }
        }
    }

    /// Reads what the database at `url` says of itself through a read-only connection, which
    /// changes neither the file nor its write-ahead log (SQLite may create an empty `-wal` and
    /// its `-shm` index beside a file that has none). Nil when the file is absent or empty; no
    /// keychain identity when it has no table (a creation that stopped before its first commit,
    /// or a database whose write-ahead log, holding every commit, is gone).
    ///
    /// - Throws: `errSecDecode` when it is not a keychain database, is damaged, or has a schema
    ///   version this code does not read.
    public static func inspect(_ url: URL) throws(KeychainError) -> DatabaseIdentity? {
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        guard size > 0 else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            return try queue.read { db -> DatabaseIdentity? in
                let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
                guard !tables.isEmpty else { return DatabaseIdentity(keychainID: nil, generation: 0, itemCount: 0) }
                guard tables.isSuperset(of: ["meta", "items"]) else {
                    throw KeychainError(
                        .errSecDecode,
                        "\(url.path) is an SQLite database but not a keychain database; it was left untouched")
                }
                let version = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'schemaVersion'")
                guard let version, readableSchemaVersions.contains(version) else {
                    throw KeychainError(
                        .errSecDecode,
                        "the keychain database has schema version \(version ?? "none"), which this version of "
                            + "swift-keychain does not read"
                    )
                }
                let generation =
                    try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'generation'").flatMap(UInt64.init)
                    ?? 0
                return DatabaseIdentity(
                    keychainID: try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'keychainID'"),
                    generation: generation, itemCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items") ?? 0)
            }
        } catch {
            throw map(error, url: url)
        }
    }

    /// Creates the schema if needed and stamps the database with `keychainID`, deleting every
    /// row first when `deletingRows` (only to finish an erase the keybag records). Returns the
    /// generation of that commit.
    public func stamp(keychainID: String, deletingRows: Bool) throws(KeychainError) -> UInt64 {
        do {
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                        CREATE TABLE IF NOT EXISTS items (
                            id INTEGER PRIMARY KEY,
                            identity BLOB NOT NULL UNIQUE,
                            version INTEGER NOT NULL,
                            itemClass TEXT NOT NULL,
                            accessGroupHash BLOB NOT NULL,
                            synchronizable INTEGER NOT NULL,
                            accessibility TEXT NOT NULL,
                            primaryKeyHash BLOB NOT NULL UNIQUE,
                            metadata BLOB NOT NULL,
                            wrappedKey BLOB NOT NULL,
                            secret BLOB NOT NULL,
                            accessControl BLOB);
                        CREATE INDEX IF NOT EXISTS itemsByClass ON items(itemClass, accessGroupHash);
                        CREATE TABLE IF NOT EXISTS attributeHashes (
                            hash BLOB NOT NULL,
                            itemID INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                            PRIMARY KEY (hash, itemID)) WITHOUT ROWID;
                        CREATE INDEX IF NOT EXISTS attributeHashesByItem ON attributeHashes(itemID);
                        INSERT OR IGNORE INTO meta (key, value) VALUES ('schemaVersion', '\(Self.schemaVersion)');
                        INSERT OR IGNORE INTO meta (key, value) VALUES ('generation', '0');
                        """)
            }
        } catch {
            throw Self.map(error, url: url)
        }
        return try write(purging: deletingRows, resettingLedger: true) { transaction in
            if deletingRows { try transaction.deleteEverything() }
            try transaction.writer().execute(
                sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('keychainID', ?)", arguments: [keychainID])
            return try transaction.generation()
        }
    }

    /// Reads in a consistent snapshot; the rows it fetches are checked against the row ledger.
    public func read<Result>(_ body: (StoreTransaction) throws -> Result) throws(KeychainError) -> Result {
        do {
            return try readers.read { reader in
                try body(
                    StoreTransaction(connection: .reader(reader), ledger: nil) { (transaction) throws(KeychainError) in
                        try self.ledger.verified(transaction).map {
                            RowLedger.Working($0, authenticator: nil, establishing: false)
                        }
                    })
            }
        } catch {
            throw Self.map(error, url: url)
        }
    }

    /// Writes atomically: every change in `body` lands, or none does, and this returns only once
    /// they are durable. Writes from other threads waiting at the same moment share the
    /// transaction and its fsync (``GroupCommit``), each in a savepoint of its own; the
    /// transaction raises the generation, which is reported once it is committed.
    ///
    /// - Parameter purging: after the commit, checkpoint the write-ahead log into the database
    ///   and truncate it, so that what `body` deleted or replaced is gone from both files (with
    ///   `secure_delete`, freed content is zeroed) before this returns.
    public func write<Value>(
        purging: Bool = false, _ body: (StoreTransaction) throws -> Value
    ) throws(KeychainError) -> Value {
        try write(purging: purging, resettingLedger: false, body)
    }

    /// ``write(purging:_:)``; with `resettingLedger`, the row ledger is made anew from the rows
    /// rather than checked (the stamp of a new or erased keychain, whose keys are new).
    private func write<Value>(
        purging: Bool, resettingLedger: Bool, _ body: (StoreTransaction) throws -> Value
    ) throws(KeychainError) -> Value {
        // The caller waits until its write is done, so its closure is only borrowed.
        let outcome: Result<Value, any Error> = withoutActuallyEscaping(body) { body in
            var result: Value?
            let write = GroupCommit.Write(purging: purging, resettingLedger: resettingLedger) { transaction in
                result = try body(transaction)
            }
            groupCommit.submit(write) { group in commitGroup(group) }
            if let error = write.error { return .failure(error) }
            guard let result else {
                return .failure(KeychainError(.errSecInternalComponent, "a write finished without a result"))
            }
            return .success(result)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error as KeychainError): throw error
        case .failure(let error as DatabaseError): throw Self.map(error, url: url)
        case .failure(let error): throw KeychainError(.errSecIO, "a write to the keychain database failed: \(error)")
        }
    }

    /// Commits one group of writes in one transaction that raises the generation once and
    /// seals the row ledger to it; each write in a savepoint of its own. A write that failed, or
    /// whose transaction did, gets its error.
    private func commitGroup(_ group: [GroupCommit.Write]) {
        do {
            let (generation, working) = try pool.write { db in
                let working = try ledger.working(db, resetting: group.contains { $0.resettingLedger })
                let transaction = StoreTransaction(connection: .writer(db), ledger: working)
                for write in group {
                    working.beginWrite()
                    if let error = try Self.inSavepoint(db, { try write.body(transaction) }) {
                        working.rollBackWrite()
                        write.error = error
                    }
                }
                try db.cachedStatement(
                    sql: "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
                ).execute()
                let generation = try transaction.generation()
                try ledger.seal(working, generation: generation, db)
                return (generation, working)
            }
            ledger.committed(working)
            committed(generation)
            if group.contains(where: { $0.purging && $0.error == nil }) {
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
        } catch {
            ledger.forget()
            for write in group where write.error == nil { write.error = error }
        }
    }

    /// Runs one write of a group in a savepoint of its own, with statements prepared once
    /// (GRDB's `inSavepoint` prepares its two on every call: a twentieth of an add). Returns the
    /// write's own error, its changes undone. When they cannot be undone (SQLite ended the
    /// whole transaction, on a full disk for one) it throws that error, which fails the whole
    /// group. (GRDB's throws only the write's error then, and the group went on: outside any
    /// transaction once SQLite had ended it, or keeping what the failed write left.)
    private static func inSavepoint(_ db: Database, _ body: () throws -> Void) throws -> (any Error)? {
        try db.cachedStatement(sql: "SAVEPOINT write").execute()
        do {
            try body()
            try db.cachedStatement(sql: "RELEASE SAVEPOINT write").execute()
            return nil
        } catch let failure {
            do {
                try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT write").execute()
                try db.cachedStatement(sql: "RELEASE SAVEPOINT write").execute()
            } catch {
                throw failure
            }
            return failure
        }
    }

    static func map(_ error: any Error, url: URL) -> KeychainError {
        if let error = error as? KeychainError { return error }
        guard let error = error as? DatabaseError else {
            return KeychainError(.errSecIO, "keychain database error: \(error)")
        }
        switch error.resultCode {
        case .SQLITE_CONSTRAINT:
            return KeychainError(.errSecDuplicateItem, "an item with the same primary key already exists")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return KeychainError(
                .errSecDecode,
                "the keychain database \(url.path) is damaged or not a keychain database; it was left untouched: "
                    + "move it away to start a new keychain, or restore a copy"
            )
        case .SQLITE_FULL:
            return KeychainError(.errSecDiskFull, "the disk holding \(url.path) is full")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
            return KeychainError(
                .errSecIO, "cannot write the keychain database \(url.path): \(error.message ?? "permission denied")")
        default:
            return KeychainError(
                .errSecIO, "keychain database error on \(url.path): \(error.message ?? "\(error.resultCode)")")
        }
    }
}
