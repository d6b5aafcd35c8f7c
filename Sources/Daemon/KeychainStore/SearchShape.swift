/// What a search's SQL depends on: which conditions it has and how many values each takes,
/// never the values. A read connection keeps its prepared search statements by shape, so a
/// search finds its statement without building and hashing the SQL text (callgrind: about
/// 9,000 instructions of a one-item read, 4% of it).
struct SearchShape: Hashable {
    /// Access groups named; nil for every group.
    var accessGroups: Int?
    /// Access groups left out.
    var excludedAccessGroups: Int
    /// Whether it matches one synchronizable flag.
    var matchesSynchronizable: Bool
    /// Whether it matches one accessibility.
    var matchesAccessibility: Bool
    /// Primary-key hashes named; nil for any.
    var primaryKeys: Int?
    /// Distinct attribute hashes every row must carry.
    var attributeHashes: Int
    /// Distinct identities named; nil for any, 0 for none.
    var identities: Int?
    /// Whether it returns at most a number of rows.
    var limited: Bool
    /// Whether it selects only the rows' heads (``RowHead``), not whole rows.
    var headsOnly = false

    /// The search's SQL: its placeholders bound in the order of the fields above, after the
    /// item class; attribute hashes rarest first (``StoreTransaction/rows(_:)`` orders them).
    ///
    /// SQLite has no statistics here (Debian's is built without STAT4, and ANALYZE's averages do
    /// not tell a rare value from a common one), so the SQL itself says which index to walk:
    /// - where a unique key, identities or an attribute hash narrow the search, the class and
    ///   group terms are written `+items.…`, which no index serves, so SQLite does not walk
    ///   `itemsByClass` (every item of the class in the caller's groups) to keep id order;
    /// - of several attribute hashes, the first's range is walked and each other is looked up by
    ///   (hash, item), instead of intersecting every hash's whole range: a generic password's
    ///   service names many items, its account few;
    /// - where that range is what the search walks (no unique key or identities name the rows),
    ///   it is joined to the items, whose ids it holds in order: as `items.id IN (…)` SQLite first
    ///   copied the whole range into a temporary index (a search of 10,000 items, 10,000 inserts).
    var sql: String {
        let narrowed = primaryKeys != nil || identities != nil || attributeHashes > 0
        let walksHashRange = attributeHashes > 0 && primaryKeys == nil && identities == nil
        let indexed = narrowed ? "+items." : "items."
        let selection = headsOnly ? RowHead.selection : StoredRow.selection
        let source = walksHashRange ? "attributeHashes JOIN items ON items.id = attributeHashes.itemID" : "items"
        var sql = "SELECT \(selection) FROM \(source) WHERE \(indexed)itemClass = ?"
        if let accessGroups {
            sql += " AND \(indexed)accessGroupHash IN (\(Self.placeholders(accessGroups)))"
        }
        if excludedAccessGroups > 0 {
            sql += " AND items.accessGroupHash NOT IN (\(Self.placeholders(excludedAccessGroups)))"
        }
        if matchesSynchronizable {
            sql += " AND items.synchronizable = ?"
        }
        if matchesAccessibility {
            sql += " AND items.accessibility = ?"
        }
        if let primaryKeys {
            sql += " AND items.primaryKeyHash IN (\(Self.placeholders(primaryKeys)))"
        }
        if walksHashRange {
            sql += " AND attributeHashes.hash = ?"
        } else if attributeHashes > 0 {
            sql += " AND items.id IN (SELECT itemID FROM attributeHashes WHERE hash = ?)"
        }
        if attributeHashes > 0 {
            sql += String(
                repeating: " AND EXISTS (SELECT 1 FROM attributeHashes WHERE hash = ? AND itemID = items.id)",
                count: attributeHashes - 1)
        }
        if let identities {
            sql += identities == 0 ? " AND 0" : " AND items.identity IN (\(Self.placeholders(identities)))"
        }
        sql += walksHashRange ? " ORDER BY attributeHashes.itemID" : " ORDER BY items.id"
        if limited {
            sql += " LIMIT ?"
        }
        return sql
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
