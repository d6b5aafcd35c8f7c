import Enclave
import Foundation
import Keychain
import Testing

@testable import KeychainServer

/// Issue 55: an item read again is answered from the attributes opened the first time, kept with
/// the class key (``OpenedAttributes``): they go with it at a lock, and an update, which makes a
/// new version, is opened anew. (A tampered row is never answered from them: `TamperTests`.)
@Suite struct OpenedAttributeTests {
    private func add(_ account: String, _ keychain: TestKeychain) throws {
        _ = try keychain.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["acct": .string(account), "labl": .string("first")],
                    secret: SecretBytes(utf8: "secret-\(account)"))))
    }

    /// The label item `account` reads as.
    private func label(_ account: String, _ keychain: TestKeychain) throws(KeychainError) -> String? {
        let query = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string(account)], returns: .attributes)
        guard case .items(let items) = try keychain.perform(.copyMatching(query)),
            case .string(let label)? = items.first?.attributes?["labl"]
        else { return nil }
        return label
    }

    private func kept(_ keychain: TestKeychain) throws -> Int {
        try keychain.server.enclave.openedAttributeCount(.whenUnlocked)
    }

    @Test func aReadItemIsKeptUntilALockAndAnUpdateIsReadAnew() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add("a", keychain)
        try add("b", keychain)
        #expect(try kept(keychain) == 0)
        #expect(try label("a", keychain) == "first")
        #expect(try label("a", keychain) == "first")
        #expect(try kept(keychain) == 1)
        #expect(try label("b", keychain) == "first")
        #expect(try kept(keychain) == 2)

        _ = try keychain.perform(
            .update(
                ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")]),
                ItemChanges(attributes: ["labl": .string("second")])))
        #expect(try label("a", keychain) == "second")

        try keychain.lock()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try kept(keychain) }
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try label("a", keychain) }
        try keychain.unlock("1234")
        #expect(try kept(keychain) == 0)
        #expect(try label("a", keychain) == "second")
    }
}
