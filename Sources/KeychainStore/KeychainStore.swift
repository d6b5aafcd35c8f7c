#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GRDB
import KeychainProtocol

/// The keychain database: one SQLite file of sealed rows, in WAL mode with `secure_delete`, so
/// that deleted rows are overwritten and a process killed mid-write leaves either the whole
/// transaction or none of it.
///
/// The store never sees a key or a plaintext: it indexes keyed hashes and keeps ciphertexts.
///
/// Schema version 1 (table `meta` holds `schemaVersion` and `keychainID`).
public final class KeychainStore: Sendable {
    private let pool: DatabasePool
    /// The database file.
    public let url: URL

    static let schemaVersion = "1"

    /// Opens (or creates) the database at `url`, mode 0600.
    ///
    /// - Throws: `errSecDecode` when the file is not a keychain database or is damaged (the
    ///   file is left untouched), `errSecIO` when it cannot be opened.
    public init(url: URL) throws(KeychainError) {
        self.url = url
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Deleted content is zeroed on disk, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        do {
            let existed = FileManager.default.fileExists(atPath: url.path)
            if !existed {
                let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if fd >= 0 { close(fd) }
            }
            pool = try DatabasePool(path: url.path, configuration: configuration)
            // An acknowledged write is on disk, even across a power cut. Set after opening:
            // GRDB's pool sets NORMAL when it enables WAL, and it has a single writer connection.
            try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrate(pool)
        } catch let error as DatabaseError {
            throw Self.map(error, url: url)
        } catch {
            throw KeychainError(.errSecIO, "cannot open the keychain database \(url.path): \(error)")
        }
    }

    private static func migrate(_ pool: DatabasePool) throws {
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS items (
                    id INTEGER PRIMARY KEY,
                    identity BLOB NOT NULL UNIQUE,
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
                INSERT OR IGNORE INTO meta (key, value) VALUES ('schemaVersion', '\(schemaVersion)');
                """)
            let version = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'schemaVersion'")
            guard version == schemaVersion else {
                throw KeychainError(.errSecDecode, "the keychain database has schema version \(version ?? "none"), which this version of swift-keychain does not read")
            }
        }
    }

    /// Reads in a consistent snapshot.
    public func read<Result>(_ body: (StoreTransaction) throws -> Result) throws(KeychainError) -> Result {
        do {
            return try pool.read { db in try body(StoreTransaction(db: db)) }
        } catch {
            throw Self.map(error, url: url)
        }
    }

    /// Writes in one transaction: every change in `body` lands, or none does.
    public func write<Result>(_ body: (StoreTransaction) throws -> Result) throws(KeychainError) -> Result {
        do {
            return try pool.write { db in try body(StoreTransaction(db: db)) }
        } catch {
            throw Self.map(error, url: url)
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
            return KeychainError(.errSecDecode, "the keychain database \(url.path) is damaged or not a keychain database; it was left untouched: move it away to start a new keychain, or restore a copy")
        case .SQLITE_FULL:
            return KeychainError(.errSecDiskFull, "the disk holding \(url.path) is full")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
            return KeychainError(.errSecIO, "cannot write the keychain database \(url.path): \(error.message ?? "permission denied")")
        default:
            return KeychainError(.errSecIO, "keychain database error on \(url.path): \(error.message ?? "\(error.resultCode)")")
        }
    }
}
