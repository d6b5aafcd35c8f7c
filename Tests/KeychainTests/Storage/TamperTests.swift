import Enclave
import Foundation
import GRDB
import Keychain
import Testing

@testable import KeychainServer

/// Swapped, moved or corrupted sealed values give errSecDecode, never another item's secret
/// (DESIGN.md, Data protection: AAD binds every ciphertext to its row).
@Suite struct TamperTests {
    enum Tamper: String, CaseIterable, Sendable {
        case metadataSwappedBetweenRows
        case secretSwappedBetweenRows
        case wrappedKeySwappedBetweenRows
        case wholeCiphertextsSwappedBetweenRows
        case secretByteFlipped
        case metadataByteFlipped
        case accessibilityColumnEdited
        case rowMovedToAnotherAccessGroup
        case indexHashesSwappedBetweenRows
        /// A value of another type where the keychain writes an integer: refused as altered,
        /// not converted (SQLite would read the text as version 0).
        case versionColumnHoldsText
    }

    /// Two items, "a" (group one) and "b" (group one), plus "c" in group two; returns row ids.
    func seed(_ keychain: TestKeychain) throws {
        for (account, group) in [("a", "one"), ("b", "one"), ("c", "two")] {
            _ = try keychain.perform(
                .add(
                    NewItem(
                        itemClass: .genericPassword, attributes: ["acct": .string(account)],
                        secret: SecretBytes(utf8: "secret-\(account)"))),
                groups: [group])
        }
    }

    func apply(_ tamper: Tamper, to url: URL) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false  // an attacker is not bound by our constraints
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.write { db in try Self.apply(tamper, db) }
    }

    static func apply(_ tamper: Tamper, _ db: Database) throws {
        switch tamper {
        case .metadataSwappedBetweenRows: try swap(["metadata"], db)
        case .secretSwappedBetweenRows: try swap(["secret"], db)
        case .wrappedKeySwappedBetweenRows: try swap(["wrappedKey"], db)
        case .wholeCiphertextsSwappedBetweenRows: try swap(["metadata", "wrappedKey", "secret"], db)
        case .secretByteFlipped: try flip("secret", db)
        case .metadataByteFlipped: try flip("metadata", db)
        case .accessibilityColumnEdited:
            try db.execute(sql: "UPDATE items SET accessibility = 'aku' WHERE id = 1")
        case .rowMovedToAnotherAccessGroup:
            try db.execute(
                sql: "UPDATE items SET accessGroupHash = (SELECT accessGroupHash FROM items WHERE id = 3) WHERE id = 1")
        case .indexHashesSwappedBetweenRows:
            try db.execute(sql: "UPDATE attributeHashes SET itemID = -1 WHERE itemID = 1")
            try db.execute(sql: "UPDATE attributeHashes SET itemID = 1 WHERE itemID = 2")
            try db.execute(sql: "UPDATE attributeHashes SET itemID = 2 WHERE itemID = -1")
        case .versionColumnHoldsText:
            try db.execute(sql: "UPDATE items SET version = 'one' WHERE id = 1")
        }
    }

    static func swap(_ columns: [String], _ db: Database) throws {
        for column in columns {
            try db.execute(sql: """
                UPDATE items SET \(column) = CASE id
                    WHEN 1 THEN (SELECT \(column) FROM items WHERE id = 2)
                    ELSE (SELECT \(column) FROM items WHERE id = 1) END
                WHERE id IN (1, 2)
                """)
        }
    }

    static func flip(_ column: String, _ db: Database) throws {
        let original = try Data.fetchOne(db, sql: "SELECT \(column) FROM items WHERE id = 1") ?? Data()
        var value = original
        value[value.count / 2] ^= 0x01
        try db.execute(sql: "UPDATE items SET \(column) = ? WHERE id = 1", arguments: [value])
    }

    /// The secret a query for `account` returns to `group`, or the error's status.
    func secret(of account: String, as group: String, in keychain: TestKeychain) -> Result<String?, KeychainError> {
        let query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string(account)], returns: .data)
        return Result { () throws(KeychainError) -> String? in
            guard case .items(let items) = try keychain.perform(.copyMatching(query), groups: [group]) else {
                return nil
            }
            return items.first?.secret.map { String(decoding: $0.copyData(), as: UTF8.self) }
        }
    }

    @Test(arguments: Tamper.allCases)
    func tamperingGivesErrSecDecodeNeverAnotherItemsSecret(_ tamper: Tamper) throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try seed(keychain)
        try apply(tamper, to: keychain.databaseURL)
        try expectDetected(tamper, keychain)
    }

    /// The same tampering after every item was read once, its attributes kept opened
    /// (``OpenedAttributes``): nothing kept answers for a row that changed.
    @Test(arguments: Tamper.allCases)
    func tamperingAfterAReadGivesErrSecDecodeNeverAnotherItemsSecret(_ tamper: Tamper) throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try seed(keychain)
        for (account, group) in [("a", "one"), ("b", "one"), ("c", "two")] {
            #expect(try secret(of: account, as: group, in: keychain).get() == "secret-\(account)")
        }
        #expect(try keychain.server.enclave.openedAttributeCount(.whenUnlocked) == 3)
        try apply(tamper, to: keychain.databaseURL)
        try expectDetected(tamper, keychain)
    }

    /// Every query answers its own item's secret or nothing, and at least one notices `tamper`.
    private func expectDetected(_ tamper: Tamper, _ keychain: TestKeychain) throws {
        var detected = false
        for (account, group) in [("a", "one"), ("a", "two"), ("b", "one"), ("c", "two")] {
            switch secret(of: account, as: group, in: keychain) {
            case .success(let secret):
                // Whatever a query returns is the secret of the item it asked for, or nothing.
                #expect(
                    secret == nil || secret == "secret-\(account)",
                    "\(tamper): a query for \(account) returned \(secret ?? "")")
            case .failure(let error):
                #expect([errSecDecode, errSecItemNotFound].contains(error.status), "\(tamper): \(error)")
                detected = detected || error.status == errSecDecode
            }
        }
        #expect(detected, "\(tamper) went unnoticed")
    }

    @Test func aDamagedItemCanStillBeDeleted() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try seed(keychain)
        try apply(.metadataByteFlipped, to: keychain.databaseURL)
        _ = try keychain.perform(
            .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")])), groups: ["one"])
        #expect(throws: KeychainError.errSecItemNotFound) {
            try keychain.perform(
                .copyMatching(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")])),
                groups: ["one"])
        }
    }

    @Test func aDeleteComparedAfterOpeningLeavesADamagedItemItMayNotMatch() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try seed(keychain)
        // "a" (row 1) is damaged; a case-insensitive delete of "B" reads every row of the group.
        try apply(.metadataByteFlipped, to: keychain.databaseURL)
        var query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("B")])
        query.matchesCaseInsensitively = true
        guard case .count(let deleted) = try keychain.perform(.delete(query), groups: ["one"]) else {
            Issue.record("no count"); return
        }
        #expect(deleted == 1)
        // The damaged row is still there: an exact delete of "a" finds and removes it.
        guard
            case .count(let damaged) = try keychain.perform(
                .delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")])), groups: ["one"])
        else {
            Issue.record("no count")
            return
        }
        #expect(damaged == 1)
    }
}

/// Requirement 2: the database file alone reveals nothing, and cannot be opened without the
/// device secret.
@Suite struct StolenDatabaseTests {
    let values = [
        "distinctive-service-name", "distinctive-account@example.com", "distinctive label text",
        "distinctive-secret-value",
    ]

    func seeded() throws -> TestKeychain {
        let keychain = try TestKeychain.make()
        try keychain.setPasscode("1234")
        _ = try keychain.perform(.add(NewItem(
            itemClass: .genericPassword,
            attributes: ["svce": .string(values[0]), "acct": .string(values[1]), "labl": .string(values[2])],
            secret: SecretBytes(utf8: values[3]))), groups: ["distinctive.group.name"])
        return keychain
    }

    @Test func theFilesHoldNoAttributeValueAndNoSecretInClear() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let files = try FileManager.default.contentsOfDirectory(atPath: keychain.directory.path)
        for file in files {
            let bytes = try Data(contentsOf: keychain.directory.appendingPathComponent(file))
            for value in values + ["distinctive.group.name", "1234"] where value != "1234" || file != "device-secret" {
                #expect(bytes.range(of: Data(value.utf8)) == nil, "\(file) contains \(value)")
            }
        }
    }

    @Test func aCopyWithoutTheDeviceSecretCannotBeOpened() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("stolen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: keychain.directory, to: copy)
        try FileManager.default.removeItem(at: copy.appendingPathComponent("device-secret"))
        #expect(throws: KeychainError.errSecNotAvailable) {
            try TestKeychain.open(copy, clock: StubClock(), cache: .init())
        }
        // Another device's secret opens nothing either: the keybag is authenticated with a key
        // derived from the device secret, so it is refused before any passcode is tried.
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(
            to: copy.appendingPathComponent("device-secret"))
        #expect(throws: KeychainError.errSecDecode) { try TestKeychain.open(copy, clock: StubClock(), cache: .init()) }
    }

    @Test func aCorruptDatabaseFileGivesErrSecDecodeAndIsLeftUntouched() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let garbage = Data(String(repeating: "this is not a database ", count: 300).utf8)
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: keychain.databaseURL.path + suffix)
        }
        try garbage.write(to: keychain.databaseURL)
        #expect(throws: KeychainError.errSecDecode) { try keychain.restarted() }
        #expect(try Data(contentsOf: keychain.databaseURL) == garbage)
    }
}
