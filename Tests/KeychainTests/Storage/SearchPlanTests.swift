import Foundation
import GRDB
import Testing

@testable import KeychainStore

/// Issue 55: a search walks the narrowest index SQLite has for it. Without statistics SQLite
/// walked `itemsByClass` (every item of the class in the caller's groups) for a search it could
/// keep in id order, and intersected every attribute hash's whole range: a read by service and
/// account went through every item of the service. The plans, as SQLite reports them, and the
/// rows each search finds.
@Suite struct SearchPlanTests {
    /// A new store's database, and its plan for `shape`'s SQL, one line a step.
    private func plan(_ shape: SearchShape) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("search-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("keychain.db")
        let store = try KeychainStore(url: url, ledger: ConstantRowLedger())
        _ = try store.stamp(keychainID: "search-plan", deletingRows: false)
        let database = try DatabaseQueue(path: url.path)
        let sql = shape.sql
        let arguments = StatementArguments(
            [DatabaseValue](repeating: .null, count: sql.filter { $0 == "?" }.count))
        return try database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }.joined(separator: "\n")
    }

    private func shape(
        groups: Int? = 2, primaryKeys: Int? = nil, hashes: Int = 0, identities: Int? = nil, limited: Bool = true
    ) -> SearchShape {
        SearchShape(
            accessGroups: groups, excludedAccessGroups: 0, matchesSynchronizable: true, matchesAccessibility: false,
            primaryKeys: primaryKeys, attributeHashes: hashes, identities: identities, limited: limited)
    }

    @Test func severalAttributesWalkOneRangeAndLookTheOthersUp() throws {
        let plan = try plan(shape(hashes: 3))
        #expect(!plan.contains("INTERSECT"), "\(plan)")
        #expect(!plan.contains("itemsByClass"), "\(plan)")
        #expect(plan.components(separatedBy: "(hash=? AND itemID=?)").count - 1 == 2, "\(plan)")
    }

    @Test func oneAttributeFindsItsItemsByID() throws {
        let plan = try plan(shape(hashes: 1))
        #expect(!plan.contains("itemsByClass"), "\(plan)")
        #expect(plan.contains("USING INTEGER PRIMARY KEY (rowid=?)"), "\(plan)")
    }

    /// Walked, an attribute's range is read in place: no copy of it into a temporary list
    /// (`items.id IN (…)` made one, a row per item the attribute names), and no sort.
    @Test func anAttributesRangeIsWalkedWithoutACopy() throws {
        for hashes in [1, 3] {
            for groups in [nil, 2] {
                let plan = try plan(shape(groups: groups, hashes: hashes))
                #expect(!plan.contains("LIST SUBQUERY") && !plan.contains("TEMP B-TREE"), "\(plan)")
                #expect(plan.hasPrefix("SEARCH attributeHashes USING PRIMARY KEY (hash=?)"), "\(plan)")
            }
        }
    }

    @Test func aPrimaryKeyOrAnIdentityUsesItsUniqueIndex() throws {
        let byKey = try plan(shape(primaryKeys: 1))
        #expect(byKey.contains("(primaryKeyHash=?)") && !byKey.contains("itemsByClass"), "\(byKey)")
        let byIdentity = try plan(shape(identities: 2, limited: false))
        #expect(byIdentity.contains("(identity=?)") && !byIdentity.contains("itemsByClass"), "\(byIdentity)")
    }

    @Test func aClassAndItsGroupsStillUseTheirIndex() throws {
        let plan = try plan(shape(limited: false))
        #expect(plan.contains("itemsByClass (itemClass=? AND accessGroupHash=?)"), "\(plan)")
    }

    /// The rows are the same whichever hash is rarest; a hash no row carries finds nothing.
    @Test func severalAttributesFindTheRowsCarryingAll() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("search-rows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try KeychainStore(url: folder.appendingPathComponent("keychain.db"), ledger: ConstantRowLedger())
        _ = try store.stamp(keychainID: "search-rows", deletingRows: false)
        let (service, group) = (Data("service".utf8), Data("group".utf8))
        let account = { (index: Int) in Data("account-\(index % 10)".utf8) }
        try store.write { transaction in
            for index in 0..<200 {
                let row = StoredRow(
                    identity: Data("identity-\(index)".utf8), version: 1, itemClass: "genp", accessGroupHash: group,
                    synchronizable: false, accessibility: "ak", primaryKeyHash: Data("key-\(index)".utf8),
                    metadata: Data([1]), wrappedKey: Data([2]), secret: Data([3]))
                _ = try transaction.insert(row, attributeHashes: [service, account(index)])
            }
        }
        func found(_ hashes: [Data], limit: Int? = nil) throws -> [String] {
            try store.read { transaction in
                try transaction.rows(
                    RowFilter(
                        itemClass: "genp", accessGroupHashes: [group], synchronizable: nil, attributeHashes: hashes,
                        limit: limit))
            }.map { String(decoding: $0.identity, as: UTF8.self) }
        }
        let expected = stride(from: 3, to: 200, by: 10).map { "identity-\($0)" }
        #expect(try found([service, account(3)]) == expected)
        #expect(try found([account(3), service]) == expected)
        #expect(try found([service, account(3)], limit: 1) == ["identity-3"])
        #expect(try found([service, Data("nobody".utf8)]).isEmpty)
        #expect(try found([service]).count == 200)
    }
}
