import Foundation
import GRDB
import KeychainProtocol

/// The operations available inside ``KeychainStore/read(_:)`` and ``KeychainStore/write(_:)``.
public struct StoreTransaction {
    let db: Database

    /// Rows matching `filter`, oldest first.
    public func rows(_ filter: RowFilter) throws -> [StoredRow] {
        var sql = "SELECT items.* FROM items"
        var arguments = StatementArguments()
        sql += " WHERE items.itemClass = ?"
        arguments += [filter.itemClass]
        if let groups = filter.accessGroupHashes {
            sql += " AND items.accessGroupHash IN (\(placeholders(groups.count)))"
            arguments += StatementArguments(groups)
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
            arguments += StatementArguments(primaryKeys)
        }
        let hashes = Array(Set(filter.attributeHashes))
        if !hashes.isEmpty {
            // Items carrying every requested hash: an intersection of index ranges, one per
            // attribute value.
            let ranges = Array(repeating: "SELECT itemID FROM attributeHashes WHERE hash = ?", count: hashes.count)
            sql += " AND items.id IN (\(ranges.joined(separator: " INTERSECT ")))"
            arguments += StatementArguments(hashes)
        }
        if let identity = filter.identity {
            sql += " AND items.identity = ?"
            arguments += [identity]
        }
        sql += " ORDER BY items.id"
        if let limit = filter.limit {
            sql += " LIMIT ?"
            arguments += [limit]
        }
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map(StoredRow.init(row:))
    }

    /// Inserts a row and its attribute hashes.
    ///
    /// - Throws: `errSecDuplicateItem` when a row has the same primary-key hash.
    @discardableResult
    public func insert(_ row: StoredRow, attributeHashes: [Data]) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO items (identity, itemClass, accessGroupHash, synchronizable, accessibility,
                    primaryKeyHash, metadata, wrappedKey, secret, accessControl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: row.arguments)
        let id = db.lastInsertedRowID
        try insertHashes(attributeHashes, for: id)
        return id
    }

    /// Replaces the row `id` (same identity) and its attribute hashes.
    ///
    /// - Throws: `errSecDuplicateItem` when the new primary-key hash belongs to another row.
    public func replace(_ id: Int64, with row: StoredRow, attributeHashes: [Data]) throws {
        try db.execute(
            sql: """
                UPDATE items SET identity = ?, itemClass = ?, accessGroupHash = ?, synchronizable = ?,
                    accessibility = ?, primaryKeyHash = ?, metadata = ?, wrappedKey = ?, secret = ?, accessControl = ? WHERE id = ?
                """,
            arguments: row.arguments + [id])
        try db.execute(sql: "DELETE FROM attributeHashes WHERE itemID = ?", arguments: [id])
        try insertHashes(attributeHashes, for: id)
    }

    /// Deletes rows by id.
    public func delete(_ ids: [Int64]) throws {
        for id in ids {
            try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [id])
        }
    }

    /// Deletes every row of one accessibility; returns how many.
    @discardableResult
    public func deleteAll(accessibility: String) throws -> Int {
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
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'generation'").flatMap(UInt64.init) ?? 0
    }

    private func insertHashes(_ hashes: [Data], for id: Int64) throws {
        for hash in Set(hashes) {
            try db.execute(sql: "INSERT INTO attributeHashes (hash, itemID) VALUES (?, ?)", arguments: [hash, id])
        }
    }

    private func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
