import Foundation
import GRDB

/// The peer measured in the same run: the same SQLite build and durability settings (WAL,
/// synchronous=FULL, secure_delete, one transaction per write), storing the same items in
/// clear with a plain index. The difference is what sealing, keyed hashes and SecItem
/// semantics cost.
struct PlainSQLiteBaseline {
    let pool: DatabasePool

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE items (service TEXT, account TEXT, secret BLOB, UNIQUE (service, account))")
        }
    }

    func add(service: String, account: String, secret: Data) throws {
        try pool.write { db in
            try db.execute(sql: "INSERT INTO items VALUES (?, ?, ?)", arguments: [service, account, secret])
        }
    }

    /// A delete as a careful application would make it: committed, then checkpointed with
    /// truncation, so the row is gone from the log too (what the keychain does).
    func delete(service: String, account: String) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM items WHERE service = ? AND account = ?", arguments: [service, account])
        }
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    func find(service: String, account: String) throws -> Data? {
        try pool.read { db in
            try Data.fetchOne(db, sql: "SELECT secret FROM items WHERE service = ? AND account = ?", arguments: [service, account])
        }
    }
}
