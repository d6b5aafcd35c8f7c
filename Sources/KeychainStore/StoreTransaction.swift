import Foundation
import GRDB
import KeychainProtocol

/// The operations available inside ``KeychainStore/read(_:)`` and ``KeychainStore/write(_:)``.
/// Their statements are prepared once per connection (GRDB's statement cache), not per call.
///
/// Every row read here is checked against the row ledger (``RowLedger``), and every row
/// written is recorded in it.
public struct StoreTransaction {
    let db: Database
    /// A write transaction's ledger; nil in a read.
    let ledger: RowLedger.Working?
    /// In a read, the verified ledger, asked for only when rows are fetched (a count needs no
    /// key); nil in a keychain whose database has no ledger yet, until its first write.
    let readLedger: (() throws(KeychainError) -> RowLedger.Working?)?

    init(db: Database, ledger: RowLedger.Working?, readLedger: (() throws(KeychainError) -> RowLedger.Working?)? = nil) {
        self.db = db
        self.ledger = ledger
        self.readLedger = readLedger
    }

    /// Byte strings as statement arguments (GRDB's generic initializer instantiates a key path
    /// at every call, which cost a tenth of a read).
    private func blobs(_ values: [Data]) -> StatementArguments {
        StatementArguments(values.map { $0 as (any DatabaseValueConvertible)? })
    }

    /// Rows matching `filter`, oldest first.
    public func rows(_ filter: RowFilter) throws -> [StoredRow] {
        var sql = "SELECT \(StoredRow.selection) FROM items"
        var arguments = StatementArguments()
        sql += " WHERE items.itemClass = ?"
        arguments += [filter.itemClass]
        if let groups = filter.accessGroupHashes {
            sql += " AND items.accessGroupHash IN (\(placeholders(groups.count)))"
            arguments += blobs(groups)
        }
        if let synchronizable = filter.synchronizable {
            sql += " AND items.synchronizable = ?"
            arguments += [synchronizable]
        }
        if let accessibility = filter.accessibility {
            sql += " AND items.accessibility = ?"
            arguments += [accessibility]
        }
        if let primaryKeys = filter.primaryKeyHashes {
            sql += " AND items.primaryKeyHash IN (\(placeholders(primaryKeys.count)))"
            arguments += blobs(primaryKeys)
        }
        let hashes = Array(Set(filter.attributeHashes))
        if !hashes.isEmpty {
            // Items carrying every requested hash: an intersection of index ranges, one per
            // attribute value.
            let ranges = Array(repeating: "SELECT itemID FROM attributeHashes WHERE hash = ?", count: hashes.count)
            sql += " AND items.id IN (\(ranges.joined(separator: " INTERSECT ")))"
            arguments += blobs(hashes)
        }
        if let identities = filter.identities {
            let unique = Array(Set(identities))
            sql += unique.isEmpty ? " AND 0" : " AND items.identity IN (\(Array(repeating: "?", count: unique.count).joined(separator: ", ")))"
            arguments += blobs(unique)
        }
        sql += " ORDER BY items.id"
        if let limit = filter.limit {
            sql += " LIMIT ?"
            arguments += [limit]
        }
        // Read from the statement as it steps: a copied row per match cost more than the match.
        var rows: [StoredRow] = []
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
        while let row = try cursor.next() { rows.append(StoredRow(row: row)) }
        guard !rows.isEmpty, let checker = try ledger ?? readLedger?() else { return rows }
        for row in rows { try checker.check(identity: row.identity, version: row.version) }
        return rows
    }

    /// Inserts a row and its attribute hashes.
    ///
    /// - Throws: `errSecDuplicateItem` when a row has the same primary-key hash.
    @discardableResult
    public func insert(_ row: StoredRow, attributeHashes: [Data]) throws -> Int64 {
        try db.cachedStatement(sql: """
                INSERT INTO items (identity, version, itemClass, accessGroupHash, synchronizable, accessibility,
                    primaryKeyHash, metadata, wrappedKey, secret, accessControl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(
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
        guard current.identity == row.identity else { throw KeychainError(.errSecInternalComponent, "a row's replacement has another identity") }
        try writing().record(identity: row.identity, from: current.version, to: row.version)
        try db.cachedStatement(sql: """
                UPDATE items SET identity = ?, version = ?, itemClass = ?, accessGroupHash = ?, synchronizable = ?,
                    accessibility = ?, primaryKeyHash = ?, metadata = ?, wrappedKey = ?, secret = ?, accessControl = ? WHERE id = ?
                """).execute(
            arguments: row.arguments + [id])
        try db.cachedStatement(sql: "DELETE FROM attributeHashes WHERE itemID = ?").execute(arguments: [id])
        try insertHashes(attributeHashes, for: id)
    }

    /// Deletes rows by id.
    public func delete(_ ids: [Int64]) throws {
        for id in ids {
            let current = try pair(id)
            try writing().record(identity: current.identity, from: current.version, to: nil)
            try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?").execute(arguments: [id])
        }
    }

    /// Deletes every row (finishing an erase).
    func deleteEverything() throws {
        try writing().clear()
        try db.execute(sql: "DELETE FROM items")
    }

    /// Deletes every row of one accessibility; returns how many.
    @discardableResult
    public func deleteAll(accessibility: String) throws -> Int {
        let doomed = try Row.fetchAll(db, sql: "SELECT identity, version FROM items WHERE accessibility = ?", arguments: [accessibility])
        for row in doomed {
            let identity: Data = row[0]
            let version: Int64 = row[1]
            try writing().check(identity: identity, version: version)
            try writing().record(identity: identity, from: version, to: nil)
        }
        try db.execute(sql: "DELETE FROM items WHERE accessibility = ?", arguments: [accessibility])
        return db.changesCount
    }

    /// How many rows there are, of one accessibility or of any.
    public func count(accessibility: String? = nil) throws -> Int {
        if let accessibility {
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items WHERE accessibility = ?", arguments: [accessibility]) ?? 0
        }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM items") ?? 0
    }

    /// The database's commit generation.
    func generation() throws -> UInt64 {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'generation'")).flatMap(UInt64.init) ?? 0
    }

    /// The identity and version of row `id`, checked against the ledger.
    private func pair(_ id: Int64) throws -> (identity: Data, version: Int64) {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT identity, version FROM items WHERE id = ?"), arguments: [id]) else {
            throw KeychainError(.errSecItemNotFound, "the item was deleted meanwhile")
        }
        let identity: Data = row[0]
        let version: Int64 = row[1]
        try writing().check(identity: identity, version: version)
        return (identity, version)
    }

    /// The ledger of a write transaction.
    private func writing() throws(KeychainError) -> RowLedger.Working {
        guard let ledger, ledger.authenticator != nil else {
            throw KeychainError(.errSecInternalComponent, "a keychain row was written outside a write transaction")
        }
        return ledger
    }

    private func insertHashes(_ hashes: [Data], for id: Int64) throws {
        for hash in Set(hashes) {
            try db.cachedStatement(sql: "INSERT INTO attributeHashes (hash, itemID) VALUES (?, ?)").execute(arguments: [hash, id])
        }
    }

    private func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
