import Enclave
import Foundation
import Keychain
import Testing

@testable import KeychainServer

/// Issue 55: a query that asks for persistent references alone opens no sealed row for items
/// whose attributes were opened before (``OpenedAttributes``): it is answered from the rows'
/// index columns and the attributes kept. A row not opened before, or changed since, is opened
/// as before, and a tampered one refused; a tampered row whose identity and version were kept is
/// listed as it was opened, and refused when read (Docs/DataProtection.md).
@Suite struct ReferenceQueryTests {
    private func add(_ account: String, _ keychain: TestKeychain) throws {
        _ = try keychain.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["svce": .string("refs"), "acct": .string(account)],
                    secret: SecretBytes(utf8: "secret-\(account)"))))
    }

    private func query(_ account: String, _ returns: ReturnSelection, limit: MatchLimit = .one) -> ItemQuery {
        ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string(account)], limit: limit, returns: returns)
    }

    /// The persistent references of the items with `account` (of the first alone by default).
    private func references(
        _ account: String, _ keychain: TestKeychain, limit: MatchLimit = .one
    ) throws(KeychainError) -> [Data] {
        guard case .items(let items) = try keychain.perform(.copyMatching(query(account, .persistentRef, limit: limit)))
        else { return [] }
        return items.compactMap(\.persistentRef)
    }

    /// The persistent reference of the item with `account`.
    private func reference(_ account: String, _ keychain: TestKeychain) throws(KeychainError) -> Data? {
        try references(account, keychain).first
    }

    /// Reads the item with `account`'s attributes, which keeps them opened.
    private func readAttributes(_ account: String, _ keychain: TestKeychain) throws(KeychainError) {
        _ = try keychain.perform(.copyMatching(query(account, .attributes)))
    }

    /// The secret the item `reference` names reads as.
    private func secret(_ reference: Data, _ keychain: TestKeychain) throws(KeychainError) -> String? {
        let query = ItemQuery(itemClass: .genericPassword, persistentRef: reference, returns: .data)
        guard case .items(let items) = try keychain.perform(.copyMatching(query)) else { return nil }
        return items.first?.secret.map { String(decoding: $0.copyData(), as: UTF8.self) }
    }

    private func kept(_ keychain: TestKeychain) throws -> Int {
        try keychain.server.enclave.openedAttributeCount(.whenUnlocked)
    }

    /// Two items read, then their sealed attributes swapped, identities and versions kept: a
    /// reference query still answers each item's reference, which it could not have if it had
    /// opened the row (an attributes query is refused); the secret read through it is refused. A
    /// lock forgets, and after the unlock the reference query opens the row and refuses it.
    @Test func referencesOfItemsReadBeforeComeFromTheIndexColumns() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add("a", keychain)
        try add("b", keychain)
        try readAttributes("a", keychain)
        try readAttributes("b", keychain)
        let first = try #require(try reference("a", keychain))
        #expect(try secret(first, keychain) == "secret-a")
        try keychain.alterDatabase("""
            UPDATE items SET metadata = CASE id WHEN 1 THEN (SELECT metadata FROM items WHERE id = 2)
                ELSE (SELECT metadata FROM items WHERE id = 1) END WHERE id IN (1, 2)
            """)
        #expect(try reference("a", keychain) == first)
        #expect(throws: KeychainError.errSecDecode) { try readAttributes("a", keychain) }
        #expect(throws: KeychainError.errSecDecode) { try secret(first, keychain) }
        try keychain.lock()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try reference("a", keychain) }
        try keychain.unlock("1234")
        #expect(throws: KeychainError.errSecDecode) { try reference("a", keychain) }
    }

    /// An item never opened is opened by the reference query, and kept; an update makes a new
    /// version, which is opened again and found by its new attributes only.
    @Test func anItemNotOpenedBeforeOrUpdatedSinceIsOpened() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add("a", keychain)
        #expect(try kept(keychain) == 0)
        let first = try #require(try reference("a", keychain))
        #expect(try kept(keychain) == 1)
        #expect(try reference("a", keychain) == first)
        _ = try keychain.perform(
            .update(
                ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")]),
                ItemChanges(attributes: ["acct": .string("c")])))
        #expect(throws: KeychainError.errSecItemNotFound) { try reference("a", keychain) }
        #expect(try reference("c", keychain) == first)
    }

    /// An index that lists a kept item under a hash it does not carry is refused, as opening the
    /// item would refuse it (a query for every match reaches it).
    @Test func anIndexThatPointsAReferenceQueryAtAKeptItemIsRefused() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add("a", keychain)
        try add("b", keychain)
        try readAttributes("a", keychain)
        try readAttributes("b", keychain)
        try keychain.alterDatabase(
            "INSERT OR IGNORE INTO attributeHashes SELECT hash, 2 FROM attributeHashes WHERE itemID = 1")
        #expect(try references("a", keychain).count == 1)
        #expect(throws: KeychainError.errSecDecode) { try references("a", keychain, limit: .all) }
    }

    /// A row's identity or group tag longer than the keychain writes (a head holds at most 32
    /// bytes of each, ``ColumnBytes``) is refused when the heads are read, read before or not.
    /// Asked as the owner, who sees every group: another app's would not find a row whose group
    /// tag changed.
    @Test(arguments: ["identity", "accessGroupHash"])
    func aHeadColumnLongerThanTheKeychainWritesIsRefused(_ column: String) throws {
        for readBefore in [false, true] {
            let keychain = try TestKeychain.make()
            defer { keychain.remove() }
            try add("a", keychain)
            if readBefore { try readAttributes("a", keychain) }
            try keychain.alterDatabase(
                "UPDATE items SET \(column) = CAST(\(column) || zeroblob(33) AS BLOB) WHERE id = 1")
            #expect(throws: KeychainError.errSecDecode) {
                try keychain.perform(.copyMatching(query("a", .persistentRef)), owner: true)
            }
        }
    }
}
