import GRDB
import GRDBSQLite
import Synchronization

/// A read-only SQLite connection of the store's own, with the statements it has prepared.
///
/// Reads go through these rather than GRDB's `DatabasePool`: for a one-item lookup the pool's
/// dispatch queue, reader pool, locks and schema-version check cost about 80,000 instructions,
/// a third of all the rest of the read, and a hop to another thread. Writes stay on GRDB's
/// single writer. The connection cannot write: it is opened `SQLITE_OPEN_READONLY`, so nothing a read
/// does can change the file. It never follows a link (`SQLITE_OPEN_NOFOLLOW`).
///
/// Its statements are kept for the next reads, at most ``preparedLimit`` of them at the start of
/// a read: a search's SQL varies with its values (as many placeholders as values), so a client
/// could otherwise make the cache grow without end. Past the limit they are all finalized, at
/// the start of a read, when none is in use.
///
/// `@unchecked Sendable`: a connection is used by one thread at a time, taken from
/// ``ReadConnections`` and handed back after the read.
final class ReadConnection: @unchecked Sendable {
    let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Search statements, by what their SQL depends on.
    private var searches: [SearchShape: OpaquePointer] = [:]
    /// The most statements kept from one read to the next.
    static let preparedLimit = 64
    /// How many statements are kept now.
    var preparedCount: Int { statements.count + searches.count }

    init(path: String) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(
            path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nil)
        guard let opened else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: "cannot open a reader of the keychain database")
        }
        handle = opened
        guard code == SQLITE_OK else {
            let error = SQLiteQuery.error(code, handle)
            sqlite3_close_v2(opened)
            throw error
        }
        // As the writer: wait up to 10 s on another process's lock rather than fail at once.
        sqlite3_busy_timeout(opened, 10_000)
    }

    deinit {
        finalizeStatements()
        sqlite3_close_v2(handle)
    }

    private func finalizeStatements() {
        for statement in statements.values { sqlite3_finalize(statement) }
        for statement in searches.values { sqlite3_finalize(statement) }
        statements.removeAll()
        searches.removeAll()
    }

    /// The statement for `sql`, prepared once per connection.
    func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// The search statement of `shape`, prepared once per connection.
    func prepared(_ shape: SearchShape) throws -> OpaquePointer {
        if let statement = searches[shape] { return statement }
        let statement = try prepare(shape.sql)
        searches[shape] = statement
        return statement
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteQuery.error(code, handle) }
        return statement
    }

    /// Runs `body` in one read transaction: every statement in it sees the same snapshot.
    func inReadTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        if preparedCount > Self.preparedLimit { finalizeStatements() }
        try run("BEGIN")
        let result: Result
        do {
            result = try body()
        } catch {
            try? run("ROLLBACK")
            throw error
        }
        try run("COMMIT")
        return result
    }

    /// True when no transaction is left open: the connection can serve the next read.
    var isIdle: Bool { sqlite3_get_autocommit(handle) != 0 }

    private func run(_ sql: String) throws {
        let query = SQLiteQuery(try prepared(sql))
        defer { query.reset() }
        while try query.next() {}
    }
}

/// The store's read connections not in use, kept for the next read.
final class ReadConnections: Sendable {
    private let path: String
    private let idle = Mutex<[ReadConnection]>([])
    /// More than this many idle connections are closed rather than kept.
    private static let kept = 8

    init(path: String) {
        self.path = path
    }

    /// Runs `body` with a connection of its own, in one read transaction.
    func read<Result>(_ body: (ReadConnection) throws -> Result) throws -> Result {
        let connection = try idle.withLock { $0.popLast() } ?? ReadConnection(path: path)
        defer {
            if connection.isIdle { idle.withLock { if $0.count < Self.kept { $0.append(connection) } } }
        }
        return try connection.inReadTransaction { try body(connection) }
    }
}
