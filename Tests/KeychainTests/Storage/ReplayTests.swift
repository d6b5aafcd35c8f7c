import Crypto
import Foundation
import GRDB
import Keychain
import KeychainSupport
import Testing

@testable import Enclave

/// Rollback and replay, tried as somebody who can write the database file would (or who puts
/// back a copy of it): an item's old row written back, a deleted row put back, a row from before
/// an access control was set. Each gives errSecDecode, never the old secret, both in the
/// keychain that is open (it remembers every row's version) and in one opened afresh (it checks
/// every row against the authenticated ledger).
@Suite struct ReplayTests {
    /// What an attacker copied: every column of every row, and the index rows.
    struct Copy {
        var items: [Row]
        var hashes: [Row]
    }

    static func attacker(_ url: URL) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false  // an attacker is not bound by our constraints
        return try DatabaseQueue(path: url.path, configuration: configuration)
    }

    static func copy(_ url: URL) throws -> Copy {
        try attacker(url).read { db in
            Copy(
                items: try Row.fetchAll(db, sql: "SELECT * FROM items"),
                hashes: try Row.fetchAll(db, sql: "SELECT * FROM attributeHashes"))
        }
    }

    /// Writes back the row of `identity` (and its index rows) as `copy` has it, over whatever is
    /// there now; `editing` changes columns first.
    static func writeBack(
        _ identity: Data, from copy: Copy, to url: URL, editing: (inout [String: DatabaseValue]) -> Void = { _ in }
    ) throws {
        guard let old = copy.items.first(where: { ($0["identity"] as Data?) == identity }) else {
            throw KeychainError.errSecItemNotFound
        }
        var columns: [String: DatabaseValue] = [:]
        for name in old.columnNames { columns[name] = old[name] }
        editing(&columns)
        let id: Int64 = old["id"]
        try attacker(url).write { db in
            try db.execute(sql: "DELETE FROM items WHERE identity = ? OR id = ?", arguments: [identity, id])
            let names = columns.keys.sorted()
            try db.execute(
                sql:
                    "INSERT INTO items (\(names.joined(separator: ", "))) VALUES "
                    + "(\(names.map { _ in "?" }.joined(separator: ", ")))",
                arguments: StatementArguments(names.map { columns[$0]! }))
            try db.execute(sql: "DELETE FROM attributeHashes WHERE itemID = ?", arguments: [id])
            for hash in copy.hashes where (hash["itemID"] as Int64) == id {
                try db.execute(
                    sql: "INSERT INTO attributeHashes (hash, itemID) VALUES (?, ?)",
                    arguments: [hash["hash"] as Data, id])
            }
        }
    }

    static func identity(of account: String, in keychain: TestKeychain) throws -> Data {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["acct": .string(account)], returns: .persistentRef)
        guard case .items(let items) = try keychain.perform(.copyMatching(query)),
            let reference = items.first?.persistentRef
        else {
            throw KeychainError.errSecItemNotFound
        }
        return try #require(
            try attacker(keychain.databaseURL).read { db in
                try Data.fetchAll(db, sql: "SELECT identity FROM items").first { reference.range(of: $0) != nil }
            })
    }

    static func add(_ account: String, _ secret: String, to keychain: TestKeychain) throws {
        _ = try keychain.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["acct": .string(account)],
                    secret: SecretBytes(utf8: secret))))
    }

    /// The secret a query returns, or the error's status.
    static func read(_ account: String, _ keychain: TestKeychain) -> Result<String?, KeychainError> {
        let query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string(account)], returns: .data)
        return Result { () throws(KeychainError) -> String? in
            guard case .items(let items) = try keychain.perform(.copyMatching(query)) else { return nil }
            return items.first?.secret.map { String(decoding: $0.copyData(), as: UTF8.self) }
        }
    }

    /// The query's outcome in the open keychain and in the same files opened afresh.
    static func expectRefused(
        _ account: String, _ keychain: TestKeychain, passcode: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reopened = try keychain.restarted()
        if let passcode { try reopened.unlock(passcode) }
        for (name, instance) in [("the open keychain", keychain), ("the keychain opened afresh", reopened)] {
            switch read(account, instance) {
            case .success(let secret):
                Issue.record(
                    "\(name) returned \(secret ?? "nothing") for a replayed row", sourceLocation: sourceLocation)
            case .failure(let error):
                #expect(error.status == errSecDecode, "\(name): \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Alice's item with its old password, copied as it is, then given a new password; returns
    /// its row identity and the copy.
    static func passwordChangedAfterACopy(_ keychain: TestKeychain) throws -> (identity: Data, before: Copy) {
        try add("alice", "old-password", to: keychain)
        let identity = try identity(of: "alice", in: keychain)
        let before = try copy(keychain.databaseURL)
        let query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("alice")])
        _ = try keychain.perform(.update(query, ItemChanges(secret: SecretBytes(utf8: "new-password"))))
        return (identity, before)
    }

    @Test func anItemsOldRowWrittenBackDoesNotBringBackItsOldPassword() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let (identity, before) = try Self.passwordChangedAfterACopy(keychain)
        try Self.writeBack(identity, from: before, to: keychain.databaseURL)
        try Self.expectRefused("alice", keychain)
    }

    @Test func oldCiphertextsUnderTheCurrentVersionNumberDoNotOpen() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let (identity, before) = try Self.passwordChangedAfterACopy(keychain)
        let current: Int64 = try #require(
            try Self.attacker(keychain.databaseURL).read { db in
                try Int64.fetchOne(db, sql: "SELECT version FROM items WHERE identity = ?", arguments: [identity])
            })
        #expect(current == 2)
        // The version column says what the ledger expects; the ciphertexts are the old ones.
        try Self.writeBack(identity, from: before, to: keychain.databaseURL) { $0["version"] = current.databaseValue }
        try Self.expectRefused("alice", keychain)
    }

    @Test func aDeletedItemPutBackStaysDeleted() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try Self.add("alice", "alice-password", to: keychain)
        try Self.add("bob", "bob-password", to: keychain)
        let identity = try Self.identity(of: "alice", in: keychain)
        let before = try Self.copy(keychain.databaseURL)
        _ = try keychain.perform(
            .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("alice")])))
        try Self.writeBack(identity, from: before, to: keychain.databaseURL)
        try Self.expectRefused("alice", keychain)
        // Opened afresh, the rows no longer add up to the ledger: nothing is read until the files
        // are restored as they were.
        #expect(throws: KeychainError.errSecDecode) { try Self.read("bob", keychain.restarted()).get() }
        // The open keychain still serves the rows it knows.
        #expect(try Self.read("bob", keychain).get() == "bob-password")
    }

    @Test func aRowFromBeforeItsAccessControlDoesNotRemoveIt() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try Self.add("alice", "alice-password", to: keychain)
        let identity = try Self.identity(of: "alice", in: keychain)
        let before = try Self.copy(keychain.databaseURL)
        var changes = ItemChanges()
        changes.accessControl = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .userPresence)
        _ = try keychain.perform(
            .update(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("alice")]), changes))
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try Self.read("alice", keychain).get() }
        try Self.writeBack(identity, from: before, to: keychain.databaseURL)
        try Self.expectRefused("alice", keychain, passcode: "1234")
    }

    @Test func theLedgerCannotBeRemovedNorPutBackWithOlderRows() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try Self.add("alice", "old-password", to: keychain)
        let before = try Self.copy(keychain.databaseURL)
        let oldLedger = try Self.attacker(keychain.databaseURL).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'rowLedger'")
        }
        let query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("alice")])
        _ = try keychain.perform(.update(query, ItemChanges(secret: SecretBytes(utf8: "new-password"))))
        let url = keychain.databaseURL
        // The old rows with the old ledger, the generation left as it is.
        try Self.writeBack(try Self.identity(of: "alice", in: keychain), from: before, to: url)
        try Self.attacker(url).write { db in
            try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'rowLedger'", arguments: [oldLedger])
        }
        try Self.expectRefused("alice", keychain)
        // No ledger at all.
        try Self.attacker(url).write { db in try db.execute(sql: "DELETE FROM meta WHERE key = 'rowLedger'") }
        #expect(throws: KeychainError.errSecDecode) { try Self.read("alice", keychain.restarted()).get() }
    }

    /// The open keychain's memory of the ledger (merged in place after each commit) is the
    /// ledger: after updates, deletes and writes that failed and were rolled back, a row written
    /// back from before them is refused without a restart, and every current row still reads.
    @Test func theOpenKeychainRemembersEveryCommittedWriteAndNoFailedOne() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        for index in 0..<10 { try Self.add("account-\(index)", "secret-\(index)", to: keychain) }
        let identity = try Self.identity(of: "account-3", in: keychain)
        let before = try Self.copy(keychain.databaseURL)
        _ = try keychain.perform(
            .update(
                ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("account-3")]),
                ItemChanges(secret: SecretBytes(utf8: "changed"))))
        _ = try keychain.perform(
            .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("account-5")])))
        #expect(throws: KeychainError.errSecDuplicateItem) { try Self.add("account-3", "duplicate", to: keychain) }
        try Self.add("account-10", "secret-10", to: keychain)
        #expect(try Self.read("account-3", keychain).get() == "changed")
        #expect(try Self.read("account-10", keychain).get() == "secret-10")
        #expect(throws: KeychainError.errSecItemNotFound) { try Self.read("account-5", keychain).get() }
        try Self.writeBack(identity, from: before, to: keychain.databaseURL)
        try Self.expectRefused("account-3", keychain)
        #expect(try Self.read("account-4", keychain).get() == "secret-4")
    }

    @Test func everyWriteKeepsTheLedgerTrueAcrossRestarts() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        for index in 0..<20 { try Self.add("account-\(index)", "secret-\(index)", to: keychain) }
        for index in stride(from: 0, to: 20, by: 3) {
            _ = try keychain.perform(
                .update(
                    ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("account-\(index)")]),
                    ItemChanges(secret: SecretBytes(utf8: "changed-\(index)"))))
        }
        for index in stride(from: 1, to: 20, by: 4) {
            _ = try keychain.perform(
                .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("account-\(index)")])))
        }
        // A failing write inside a group leaves the ledger as it was.
        #expect(throws: KeychainError.errSecDuplicateItem) { try Self.add("account-0", "duplicate", to: keychain) }
        let reopened = try keychain.restarted()
        for index in 0..<20 where index % 4 != 1 {
            #expect(
                try Self.read("account-\(index)", reopened).get()
                    == (index % 3 == 0 ? "changed-\(index)" : "secret-\(index)"))
        }
    }
}

/// A keychain made before row ledgers (schema 1, a keybag without the ledger flag) is upgraded
/// in place: its first write establishes the ledger, and from then on the ledger is required.
@Suite struct RowLedgerUpgradeTests {
    /// Turns `keychain`'s files into what a build before ledgers left: no version column, no
    /// ledger, schema version 1, a keybag that does not know of ledgers (re-authenticated, as
    /// that build wrote it).
    func makeLegacy(_ keychain: TestKeychain) throws {
        let queue = try ReplayTests.attacker(keychain.databaseURL)
        try queue.write { db in
            try db.execute(sql: "ALTER TABLE items DROP COLUMN version")
            try db.execute(sql: "DELETE FROM meta WHERE key = 'rowLedger'")
            try db.execute(sql: "UPDATE meta SET value = '1' WHERE key = 'schemaVersion'")
        }
        let files = try KeychainDirectory(keychain.directory, creating: false)
        let deviceKey = SymmetricKey(
            data: try Data(contentsOf: keychain.directory.appendingPathComponent("device-secret")))
        var keybag = try #require(try Keybag.load(files, deviceKey: deviceKey, limits: TestKeychain.fastLimits))
        keybag.rowLedger = nil
        try keybag.save(files, deviceKey: deviceKey)
    }

    @Test func aKeychainFromBeforeLedgersGetsOneAtItsFirstWriteAndKeepsIt() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try ReplayTests.add("alice", "alice-password", to: keychain)
        _ = try keychain.perform(
            .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("alice")])))
        try makeLegacy(keychain)

        let upgraded = try keychain.restarted()
        #expect(throws: KeychainError.errSecItemNotFound) { try ReplayTests.read("alice", upgraded).get() }
        try ReplayTests.add("bob", "bob-password", to: upgraded)
        let schema = try ReplayTests.attacker(keychain.databaseURL).read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'schemaVersion'")
        }
        #expect(schema == "2")
        #expect(try ReplayTests.read("bob", keychain.restarted()).get() == "bob-password")

        // Established, the ledger is required: removing it no longer passes for an old keychain.
        try ReplayTests.attacker(keychain.databaseURL).write { db in
            try db.execute(sql: "DELETE FROM meta WHERE key = 'rowLedger'")
        }
        #expect(throws: KeychainError.errSecDecode) { try ReplayTests.read("bob", keychain.restarted()).get() }
    }
}

/// Counting needs no key: the ledger is checked by the reads that return rows, so a keychain
/// that was never unlocked since it was opened still tells how many items it holds, and is
/// erased with its passcode.
@Suite struct RowLedgerLockedTests {
    @Test func aKeychainNotUnlockedSinceItOpenedCountsItsItemsAndIsErased() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try ReplayTests.add("alice", "alice-password", to: keychain)
        let restarted = try keychain.restarted()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try ReplayTests.read("alice", restarted).get() }
        guard case .count(let count) = try restarted.perform(.countItems(accessibility: nil)) else {
            throw KeychainError.errSecInternalComponent
        }
        #expect(count == 1)
        guard case .count(let erased) = try restarted.perform(.erase(passcode: SecretBytes(utf8: "1234"))) else {
            throw KeychainError.errSecInternalComponent
        }
        #expect(erased == 1)
        #expect(throws: KeychainError.errSecItemNotFound) { try ReplayTests.read("alice", restarted).get() }
    }
}
