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

    /// The search's SQL: its placeholders bound in the order of the fields above, after the
    /// item class.
    var sql: String {
        var sql = "SELECT \(StoredRow.selection) FROM items WHERE items.itemClass = ?"
        if let accessGroups {
            sql += " AND items.accessGroupHash IN (\(Self.placeholders(accessGroups)))"
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
        if attributeHashes > 0 {
            // Items carrying every requested hash: an intersection of index ranges, one per
            // attribute value.
            let ranges = Array(repeating: "SELECT itemID FROM attributeHashes WHERE hash = ?", count: attributeHashes)
            sql += " AND items.id IN (\(ranges.joined(separator: " INTERSECT ")))"
        }
        if let identities {
            sql += identities == 0 ? " AND 0" : " AND items.identity IN (\(Self.placeholders(identities)))"
        }
        sql += " ORDER BY items.id"
        if limited {
            sql += " LIMIT ?"
        }
        return sql
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }
}
