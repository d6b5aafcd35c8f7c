import Foundation
import Keychain
import KeychainEmbedded
import KeychainServer
import Testing

/// The Secret Service bridge's searches, as keychaind answers them: one search finds the
/// caller's own items whole and another app's as a locked entry (its `svce` and `acct`
/// alone), and the search of other apps' items leaves the caller's own out in the store's
/// search itself.
@Suite struct SecretItemSearchTests {
    private func add(_ id: String, schema: String, through transport: EmbeddedTransport) throws {
        _ = try transport.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword,
                    attributes: [
                        "svce": .string("secret-service:login"), "acct": .string(id), "labl": .string(id),
                        "ss:xdg:schema": .string(schema),
                    ], secret: SecretBytes(utf8: "secret of \(id)"))))
    }

    @Test func oneSearchFindsTheCallersItemsWholeAndOthersAsLockedEntries() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let mail = keychain.transport(["org.example.mail"])
        let browser = keychain.transport(["org.example.browser"])
        try add("mailitem", schema: "shared", through: mail)
        try add("browseritem", schema: "shared", through: browser)
        try add("browseronly", schema: "other", through: browser)

        guard case .items(let found) = try mail.perform(.searchSecretItems(["ss:xdg:schema": .string("shared")]))
        else { throw KeychainError.errSecInternalComponent }
        let byAccount = Dictionary(
            uniqueKeysWithValues: found.compactMap { result -> (String, [String: AttributeValue])? in
                guard case .string(let account)? = result.attributes?["acct"] else { return nil }
                return (account, result.attributes ?? [:])
            })
        #expect(Set(byAccount.keys) == ["mailitem", "browseritem"])
        #expect(byAccount["mailitem"]?["labl"] == .string("mailitem"))
        #expect(byAccount["mailitem"]?["agrp"] == nil)
        #expect(Set(byAccount["browseritem"]?.keys ?? [:].keys) == ["acct", "svce"])
    }

    @Test func anotherAppsItemIsNeverTheCallersOwn() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let mail = keychain.transport(["org.example.mail"])
        try add("mailitem", schema: "shared", through: mail)
        // The caller's own item is not "another app's" item: the search of others leaves it out.
        #expect(throws: KeychainError.errSecItemNotFound) {
            _ = try mail.perform(.readOtherAppSecretItem(service: "secret-service:login", account: "mailitem"))
        }
        #expect(throws: KeychainError.errSecInteractionNotAllowed) {
            _ = try keychain.transport(["org.example.browser"]).perform(
                .readOtherAppSecretItem(service: "secret-service:login", account: "mailitem"))
        }
    }
}
