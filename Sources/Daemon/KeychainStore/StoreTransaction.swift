import Foundation
import GRDB
import KeychainProtocol

/// The operations available inside ``KeychainStore/read(_:)`` and ``KeychainStore/write(_:)``.
/// Their statements are prepared once per connection, not per call.
///
/// A read runs on one of the store's own read-only connections (``ReadConnection``), a write on
/// GRDB's writer; the queries both run are stepped through SQLite's own interface
/// (``SQLiteQuery``), which reads every column strictly by type.
///
/// Every row read here is checked against the row ledger (``RowLedger``), and every row
/// written is recorded in it.
public struct StoreTransaction {
    /// Where the transaction's statements run.
    enum Connection {
        /// GRDB's writer, inside a write transaction.
        case writer(Database)
        /// One of the store's read-only connections, inside a read transaction.
        case reader(ReadConnection)
    }

    let connection: Connection
    /// A write transaction's ledger; nil in a read.
    let ledger: RowLedger.Working?
    /// In a read, the verified ledger, asked for only when rows are fetched (a count needs no
    /// key); nil in a keychain whose database has no ledger yet, until its first write.
    let readLedger: ((StoreTransaction) throws(KeychainError) -> RowLedger.Working?)?

    init(
        connection: Connection, ledger: RowLedger.Working?,
        readLedger: ((StoreTransaction) throws(KeychainError) -> RowLedger.Working?)? = nil
    ) {
        self.connection = connection
        self.ledger = ledger
        self.readLedger = readLedger
    }

    /// Runs `sql`'s prepared statement with `bind`'s arguments, handing each row to `row`, and
    /// resets it.
    ///
    /// - Parameter variesByRequest: true for SQL built from a request (a search's placeholders
    ///   are as many as its values). GRDB's writer keeps every statement it caches, so that one
    ///   is prepared for this use only: no sequence of requests can grow the writer's cache
    ///   without end. (A reader's cache has a bound of its own, ``ReadConnection``.)
    func query(
        _ sql: String, variesByRequest: Bool = false, _ bind: (inout SQLiteQuery) -> Void = { _ in },
        row: (SQLiteQuery) throws -> Void
    ) throws {
        switch connection {
        case .writer(let db):
            let statement = variesByRequest ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql)
            try withExtendedLifetime(statement) { try Self.step(statement.sqliteStatement, bind, row) }
        case .reader(let reader):
            try Self.step(try reader.prepared(sql), bind, row)
        }
    }

    /// Runs the search statement of `shape` as ``query(_:variesByRequest:_:row:)`` runs a
    /// statement: a reader keeps it by shape, the writer prepares it for this use only.
    private func search(
        _ shape: SearchShape, _ bind: (inout SQLiteQuery) -> Void, row: (SQLiteQuery) throws -> Void
    ) throws {
        switch connection {
        case .writer:
            try query(shape.sql, variesByRequest: true, bind, row: row)
        case .reader(let reader):
            try Self.step(try reader.prepared(shape), bind, row)
        }
    }

    private static func step(
        _ prepared: OpaquePointer, _ bind: (inout SQLiteQuery) -> Void, _ row: (SQLiteQuery) throws -> Void
    ) throws {
        var query = SQLiteQuery(prepared)
        defer { query.reset() }
        bind(&query)
        while try query.next() { try row(query) }
    }

    /// Rows matching `filter`, oldest first.
    public func rows(_ filter: RowFilter) throws -> [StoredRow] {
        let rows = try search(filter, headsOnly: false, StoredRow.init)
        try check(rows.map { (RowLedger.Key($0.identity), $0.version) })
        return rows
    }

    /// The heads of the rows matching `filter` (their index columns, no ciphertext), oldest
    /// first, each checked against the row ledger as a whole row is.
    public func heads(_ filter: RowFilter) throws -> [RowHead] {
        let heads = try search(filter, headsOnly: true, RowHead.init)
        try check(heads.map { (RowLedger.Key($0.identity), $0.version) })
        return heads
    }

    /// What the search statement for `filter` selects, each row made by `make`.
    private func search<Selected>(
        _ filter: RowFilter, headsOnly: Bool, _ make: (SQLiteQuery) throws(KeychainError) -> Selected
    ) throws -> [Selected] {
        var hashes = Array(Set(filter.attributeHashes))
        // A unique key or identities find the rows already: the hashes only filter them.
        if filter.primaryKeyHashes == nil && filter.identities == nil {
            guard let ordered = try rarestFirst(hashes) else { return [] }
            hashes = ordered
        }
        let identities = filter.identities.map { Array(Set($0)) }
        let excluded = Array(Set(filter.excludedAccessGroupHashes))
        let shape = SearchShape(
            accessGroups: filter.accessGroupHashes?.count, excludedAccessGroups: excluded.count,
            matchesSynchronizable: filter.synchronizable != nil,
            matchesAccessibility: filter.accessibility != nil, primaryKeys: filter.primaryKeyHashes?.count,
            attributeHashes: hashes.count, identities: identities?.count, limited: filter.limit != nil,
            headsOnly: headsOnly)
        var selected: [Selected] = []
        try search(
            shape,
            { query in
                query.bind(filter.itemClass)
                for group in filter.accessGroupHashes ?? [] { query.bind(group) }
                for group in excluded { query.bind(group) }
                if let synchronizable = filter.synchronizable { query.bind(synchronizable ? 1 : 0) }
                if let accessibility = filter.accessibility { query.bind(accessibility) }
                for primaryKey in filter.primaryKeyHashes ?? [] { query.bind(primaryKey) }
                for hash in hashes { query.bind(hash) }
                for identity in identities ?? [] { query.bind(identity) }
                if let limit = filter.limit { query.bind(Int64(limit)) }
            }, row: { selected.append(try make($0)) })
        return selected
    }

    /// Checks each (identity, version) pair read against the row ledger.
    private func check(_ pairs: [(identity: RowLedger.Key, version: Int64)]) throws {
        guard !pairs.isEmpty, let checker = try ledger ?? readLedger?(self) else { return }
        for pair in pairs { try checker.check(pair.identity, version: pair.version) }
    }

    /// How many rows carry a hash, counted up to ``rarityBound``: enough to tell a rare hash
    /// from a common one at a bounded cost.
    static let rarityBound = 64

    /// `hashes` ordered by how many rows carry each (up to ``rarityBound``), fewest first, so
    /// that a search walks the shortest range (``SearchShape/sql``); nil when a hash is on no
    /// row, so that nothing can match. One hash needs no count.
    private func rarestFirst(_ hashes: [Data]) throws -> [Data]? {
        guard hashes.count > 1 else { return hashes }
        var counted: [(hash: Data, rows: Int64)] = []
        for hash in hashes {
            var rows: Int64 = 0
            try query(
                "SELECT count(*) FROM (SELECT 1 FROM attributeHashes WHERE hash = ? LIMIT \(Self.rarityBound))",
                { $0.bind(hash) }, row: { rows = try $0.integer(0) })
            guard rows > 0 else { return nil }
            counted.append((hash, rows))
        }
        return counted.sorted { $0.rows < $1.rows }.map(\.hash)
    }

    /// Inserts a row and its attribute hashes.
    ///
    /// - Throws: `errSecDuplicateItem` when a row has the same primary-key hash.
    @discardableResult
    public func insert(_ row: StoredRow, attributeHashes: [Data]) throws -> Int64 {
        let db = try writer()
        try db.cachedStatement(
            sql: """
                INSERT INTO items (identity, version, itemClass, accessGroupHash, synchronizable, accessibility,
                    primaryKeyHash, metadata, wrappedKey, secret, accessControl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \
                    ?)
                """
        ).execute(
            arguments: row.arguments)
        let id = db.lastInsertedRowID
        try writing().record(identity: row.identity, from: nil, to: row.version)
        try insertHashes(attributeHashes, for: id)
        return id
    }

    /// Replaces the row `id` (same identity) and its attribute hashes.
    ///
    /// - Throws: `errSecDuplicateItem` when the new primary-key hash belongs to another row.
    public func replace(_ id: Int64, with row: StoredRow, attributeHashes: [Data]) throws {
        let current = try pair(id)
        guard current.identity == row.identity else {
            throw KeychainError(.errSecInternalComponent, "a row's replacement has another identity")
        }
        try writing().record(identity: row.identity, from: current.version, to: row.version)
        let db = try writer()
        try db.cachedStatement(
            sql: """
                UPDATE items SET identity = ?, version = ?, itemClass = ?, accessGroupHash = ?, synchronizable = ?,
                    accessibility = ?, primaryKeyHash = ?, metadata = ?, wrappedKey = ?, secret = ?, accessControl = ? \
                    WHERE id = ?
                """
        ).execute(
            arguments: row.arguments + [id])
        try db.cachedStatement(sql: "DELETE FROM attributeHashes WHERE itemID = ?").execute(arguments: [id])
        try insertHashes(attributeHashes, for: id)
    }

    /// Deletes rows by id.
    public func delete(_ ids: [Int64]) throws {
        for id in ids {
            let current = try pair(id)
            try writing().record(identity: current.identity, from: current.version, to: nil)
            try writer().cachedStatement(sql: "DELETE FROM items WHERE id = ?").execute(arguments: [id])
        }
    }

    /// Deletes every row (finishing an erase).
    func deleteEverything() throws {
        try writing().clear()
        try writer().execute(sql: "DELETE FROM items")
    }

    /// Deletes every row of one accessibility; returns how many.
    @discardableResult
    public func deleteAll(accessibility: String) throws -> Int {
        var doomed: [(identity: Data, version: Int64)] = []
        try eachRowVersion("WHERE accessibility = ?", { $0.bind(accessibility) }) { doomed.append(($0, $1)) }
        for (identity, version) in doomed {
            try writing().check(RowLedger.Key(identity), version: version)
            try writing().record(identity: identity, from: version, to: nil)
        }
        let db = try writer()
        try db.execute(sql: "DELETE FROM items WHERE accessibility = ?", arguments: [accessibility])
        return db.changesCount
    }

    /// How many rows there are, of one accessibility or of any.
    public func count(accessibility: String? = nil) throws -> Int {
        var count: Int64 = 0
        if let accessibility {
            try query("SELECT COUNT(*) FROM items WHERE accessibility = ?", { $0.bind(accessibility) }) {
                count = try $0.integer(0)
            }
        } else {
            try query("SELECT COUNT(*) FROM items") { count = try $0.integer(0) }
        }
        return Int(count)
    }

    /// The database's commit generation.
    func generation() throws -> UInt64 {
        try metaValue("generation").flatMap(UInt64.init) ?? 0
    }

    /// The value `key` has in `meta`, as text; nil when absent.
    func metaValue(_ key: String) throws -> String? {
        var value: String?
        try query("SELECT value FROM meta WHERE key = ?", { $0.bind(key) }) { value = $0.convertedText(0) }
        return value
    }

    /// Every row's identity and version.
    func forEachRowVersion(_ body: (Data, Int64) throws -> Void) throws {
        try eachRowVersion("", row: body)
    }

    /// The identity and version of each row `condition` selects (a `WHERE` clause, or "").
    private func eachRowVersion(
        _ condition: String, _ bind: (inout SQLiteQuery) -> Void = { _ in }, row: (Data, Int64) throws -> Void
    ) throws {
        try query("SELECT identity, version FROM items \(condition)", bind) {
            try row(try $0.blob(0), try $0.integer(1))
        }
    }

    /// The identity and version of row `id`, checked against the ledger.
    private func pair(_ id: Int64) throws -> (identity: Data, version: Int64) {
        var found: (identity: Data, version: Int64)?
        try eachRowVersion("WHERE id = ?", { $0.bind(id) }) { found = ($0, $1) }
        guard let found else { throw KeychainError(.errSecItemNotFound, "the item was deleted meanwhile") }
        try writing().check(RowLedger.Key(found.identity), version: found.version)
        return found
    }

    /// GRDB's writer: only a write transaction has one.
    func writer() throws(KeychainError) -> Database {
        guard case .writer(let db) = connection else {
            throw KeychainError(.errSecInternalComponent, "a keychain row was written outside a write transaction")
        }
        return db
    }

    /// The ledger of a write transaction.
    private func writing() throws(KeychainError) -> RowLedger.Working {
        guard let ledger, ledger.authenticator != nil else {
            throw KeychainError(.errSecInternalComponent, "a keychain row was written outside a write transaction")
        }
        return ledger
    }

    private func insertHashes(_ hashes: [Data], for id: Int64) throws {
        let db = try writer()
        for hash in Set(hashes) {
            try db.cachedStatement(sql: "INSERT INTO attributeHashes (hash, itemID) VALUES (?, ?)").execute(arguments: [
                hash, id,
            ])
        }
    }
}
