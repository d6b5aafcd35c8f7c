import Foundation
import GRDB
import Synchronization

/// The in-process floor measured in the same run: the same SQLite build and durability settings
/// (WAL, synchronous=FULL, secure_delete), storing the same items in clear with a plain index.
/// The difference is what sealing, keyed hashes and SecItem semantics cost.
final class PlainSQLiteBaseline: Sendable {
    private static let opened = Mutex<PlainSQLiteBaseline?>(nil)

    /// The baseline the running benchmark's setup opened.
    static var current: PlainSQLiteBaseline {
        get {
            guard let baseline = opened.withLock({ $0 }) else { preconditionFailure("no baseline opened") }
            return baseline
        }
        set { opened.withLock { $0 = newValue } }
    }

    let pool: DatabasePool

    /// A database of `count` items beside the fixtures, filled on first use.
    static func filled(count: Int) throws -> PlainSQLiteBaseline {
        try FileManager.default.createDirectory(at: Fixture.root, withIntermediateDirectories: true)
        let baseline = try PlainSQLiteBaseline(path: Fixture.root.appendingPathComponent("plain-\(count).db").path)
        try baseline.pool.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS items (service TEXT, account TEXT, secret BLOB, UNIQUE (service, "
                        + "account))"
            )
            let present = try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0
            for i in present..<count {
                try db.execute(
                    sql: "INSERT INTO items VALUES (?, ?, ?)",
                    arguments: ["bench", "account-\(i)", Data("secret-\(i)".utf8)])
            }
        }
        return baseline
    }

    private init(path: String) throws {
        pool = try Self.pool(at: path)
    }

    /// A pool on the database at `path` with the keychain store's durability settings (WAL,
    /// synchronous=FULL, secure_delete): every SQLite floor of the suite opens its database so.
    static func pool(at path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        return pool
    }

    /// One secret by service and account, checked.
    func read(_ index: Int) {
        let secret = try? pool.read { db in
            try Data.fetchOne(
                db.cachedStatement(sql: "SELECT secret FROM items WHERE service = ? AND account = ?"),
                arguments: ["bench", "account-\(index)"])
        }
        precondition(secret == Data("secret-\(index)".utf8), "plain SQLite returned another secret")
    }
}
