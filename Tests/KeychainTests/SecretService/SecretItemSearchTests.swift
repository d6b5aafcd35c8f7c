import Foundation
import Keychain
import KeychainEmbedded
import KeychainServer
import Testing

/// The Secret Service bridge's searches, as keychaind answers them: one search finds the
/// caller's own items, readable and with their labels (and content types, when asked for), and
/// another app's, not readable and without, and the search of other apps' items leaves the
/// caller's own out in the store's search itself.
@Suite struct SecretItemSearchTests {
    private func add(_ id: String, schema: String, through transport: EmbeddedTransport) throws {
        _ = try transport.perform(.add(secretServiceItem(id, schema: schema)))
    }

    @Test func oneSearchFindsTheCallersItemsReadableAndOthersNot() throws {
        // Twice: the first search opens the rows, the second answers from what it remembered.
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let mail = keychain.transport(["org.example.mail"])
        let browser = keychain.transport(["org.example.browser"])
        try add("mailitem", schema: "shared", through: mail)
        try add("browseritem", schema: "shared", through: browser)
        try add("browseronly", schema: "other", through: browser)

        let own = SecretItemMatch(
            service: "secret-service:login", account: "mailitem", readable: true, label: "mailitem",
            contentType: "text/plain")
        var ownWithoutType = own
        ownWithoutType.contentType = nil
        let others = SecretItemMatch(service: "secret-service:login", account: "browseritem", readable: false)
        for _ in 0..<2 {
            for (request, expected) in [
                (KeychainRequest.searchSecretItemsWithContentTypes(["ss:xdg:schema": .string("shared")]), own),
                (.searchSecretItems(["ss:xdg:schema": .string("shared")]), ownWithoutType),
            ] {
                guard case .secretItemMatches(let found) = try mail.perform(request) else {
                    throw KeychainError.errSecInternalComponent
                }
                #expect(Set(found) == [expected, others], "\(request.kind)")
            }
        }
    }

    /// Content types come with at most 100 matches (a lookup's few); a search of more carries
    /// none, and its answer is the plain search's.
    @Test func contentTypesComeWithAHundredMatchesAtMost() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let mail = keychain.transport(["org.example.mail"])
        for index in 0..<101 { try add("item\(index)", schema: index == 0 ? "first" : "many", through: mail) }
        for (schema, count, typed) in [("many", 100, true), ("first", 1, true), ("", 101, false)] {
            let attributes: [String: AttributeValue] = schema.isEmpty ? [:] : ["ss:xdg:schema": .string(schema)]
            guard case .secretItemMatches(let found) = try mail.perform(.searchSecretItemsWithContentTypes(attributes))
            else { throw KeychainError.errSecInternalComponent }
            #expect(found.count == count)
            #expect(found.allSatisfy { $0.contentType == (typed ? "text/plain" : nil) }, "\(schema)")
        }
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
