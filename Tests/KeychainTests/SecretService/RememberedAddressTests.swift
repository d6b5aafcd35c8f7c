import Enclave
import Foundation
import Keychain
import KeychainEmbedded
import Testing

@testable import KeychainServer

/// Issue 55: the bridge's `SearchItems` answers with paths, so keychaind reads only the index
/// columns of the items it opened before under the class key open now (``RememberedItemAddresses``)
/// and opens the others. What that holds is dropped at a lock; it never lists an item for a
/// search its opened attributes did not match, nor serves a tampered row's secret.
@Suite struct RememberedAddressTests {
    private func add(_ id: String, schema: String, _ keychain: TestKeychain) throws {
        _ = try keychain.perform(.add(secretServiceItem(id, schema: schema)))
    }

    private func search(_ schema: String, _ keychain: TestKeychain) throws(KeychainError) -> [String] {
        guard case .secretItemMatches(let found) = try keychain.perform(
            .searchSecretItems(["ss:xdg:schema": .string(schema)]))
        else { throw KeychainError.errSecInternalComponent }
        return found.map(\.account)
    }

    private func secret(_ id: String, _ keychain: TestKeychain) throws(KeychainError) -> String? {
        let query = ItemQuery(
            itemClass: .genericPassword,
            attributes: ["svce": .string("secret-service:login"), "acct": .string(id)], returns: .data)
        guard case .items(let items) = try keychain.perform(.copyMatching(query)) else { return nil }
        return items.first?.secret.map { String(decoding: $0.copyData(), as: UTF8.self) }
    }

    private func remembered(_ keychain: TestKeychain) throws -> Int {
        try keychain.server.enclave.rememberedAddresses(.whenUnlocked).count
    }

    /// A row whose sealed attributes were swapped with another's, identity and version kept, is
    /// listed under the address it was opened with (said in Docs/DataProtection.md); reading it
    /// fails; a lock answers nothing and forgets; after the unlock the search opens the row and
    /// refuses it.
    @Test func aTamperedRowIsListedAsOpenedRefusedWhenReadAndForgottenAtALock() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add("a", schema: "s", keychain)
        try add("b", schema: "s", keychain)
        #expect(try search("s", keychain) == ["a", "b"])
        #expect(try remembered(keychain) == 2)
        try keychain.alterDatabase("""
            UPDATE items SET metadata = CASE id WHEN 1 THEN (SELECT metadata FROM items WHERE id = 2)
                ELSE (SELECT metadata FROM items WHERE id = 1) END WHERE id IN (1, 2)
            """)
        #expect(try search("s", keychain) == ["a", "b"])
        #expect(throws: KeychainError.errSecDecode) { try secret("a", keychain) }
        try keychain.lock()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try search("s", keychain) }
        try keychain.unlock("1234")
        #expect(try remembered(keychain) == 0)
        #expect(throws: KeychainError.errSecDecode) { try search("s", keychain) }
    }

    /// An index row that puts a remembered item under a hash it does not carry is refused, as
    /// opening the item would refuse it.
    @Test func anIndexThatPointsASearchAtARememberedItemIsRefused() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add("a", schema: "one", keychain)
        try add("b", schema: "two", keychain)
        #expect(try search("one", keychain) == ["a"])
        #expect(try search("two", keychain) == ["b"])
        try keychain.alterDatabase(
            "INSERT OR IGNORE INTO attributeHashes SELECT hash, 2 FROM attributeHashes WHERE itemID = 1")
        #expect(throws: KeychainError.errSecDecode) { try search("one", keychain) }
    }

    /// An update makes a new version: the item is opened again, and found by its new attributes.
    @Test func anUpdatedItemIsOpenedAgain() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add("a", schema: "one", keychain)
        #expect(try search("one", keychain) == ["a"])
        _ = try keychain.perform(
            .update(
                ItemQuery(
                    itemClass: .genericPassword,
                    attributes: ["svce": .string("secret-service:login"), "acct": .string("a")]),
                ItemChanges(attributes: ["ss:xdg:schema": .string("two")])))
        #expect(try search("one", keychain).isEmpty)
        #expect(try search("two", keychain) == ["a"])
    }

    /// More rows than are opened by identity: one search opens them all and remembers them; the
    /// next one opens none and lists the same, in the same order.
    @Test func manyRowsNotRememberedAreOpenedInOneSearch() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let count = KeychainServer.unrememberedOpenedByIdentity + 44
        for index in 0..<count { try add("item\(index)", schema: "many", keychain) }
        let first = try search("many", keychain)
        #expect(first == (0..<count).map { "item\($0)" })
        #expect(try remembered(keychain) == count)
        #expect(try search("many", keychain) == first)
    }
}
