import KeychainClient
import KeychainProtocol
import Synchronization
import Testing

@testable import SecretService

/// The bridge asks keychaind for search matches with content types
/// (``KeychainRequest/searchSecretItemsWithContentTypes(_:)``); a keychaind of an earlier build,
/// which an upgrade leaves running, does not know that request: the bridge then asks the plain
/// search, and goes on asking it, and its clients' searches work as before.
@Suite struct EarlierKeychaindSearchTests {
    /// keychaind as one of an earlier build answers: the request it does not know refused as a
    /// malformed one (`errSecDecode`, and the connection closed, which may take the next
    /// request with it: `losesTheNext`), the plain search answered; or, `damaged`, a keychain
    /// whose every search is refused as tampered with.
    final class Keychaind: KeychainTransport {
        let asked = Mutex<[RequestKind]>([])
        let losesTheNext: Mutex<Bool>
        let damaged: Bool

        init(losesTheNext: Bool = false, damaged: Bool = false) {
            self.losesTheNext = Mutex(losesTheNext)
            self.damaged = damaged
        }

        func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
            asked.withLock { $0.append(request.kind) }
            if damaged { throw KeychainError(.errSecDecode, "the database was tampered with") }
            switch request {
            case .searchSecretItemsWithContentTypes:
                throw KeychainError(.errSecDecode, "an unknown request (tag 56)")
            case .searchSecretItems:
                let lost = losesTheNext.withLock { losing in
                    defer { losing = false }
                    return losing
                }
                if lost { throw KeychainError(.errSecIO, "keychaind did not answer") }
                return .secretItemMatches([
                    SecretItemMatch(service: "secret-service:login", account: "a1", readable: true, label: "Mail")
                ])
            default:
                throw KeychainError(.errSecUnimplemented, "not this keychaind's")
            }
        }
    }

    @Test(arguments: [false, true])
    func anEarlierKeychaindIsAskedThePlainSearch(losesTheNext: Bool) throws {
        let keychaind = Keychaind(losesTheNext: losesTheNext)
        let items = KeychainSecretItems(transport: keychaind)
        for _ in 0..<2 {
            let found = try items.search(in: "login", matching: ["service": "imap"], at: nil)
            #expect(found.map(\.id) == ["a1"])
            #expect(found.map(\.label) == ["Mail"])
        }
        // The request it does not know is asked once; the plain search from then on.
        let plain = [RequestKind](repeating: .searchSecretItems, count: losesTheNext ? 3 : 2)
        #expect(keychaind.asked.withLock { $0 } == [.searchSecretItemsWithContentTypes] + plain)
    }

    /// A keychain that refuses every search as tampered with is not taken for an earlier
    /// keychaind: the error reaches the client, and the next search asks for content types again.
    @Test func aDamagedKeychainIsNotTakenForAnEarlierOne() {
        let keychaind = Keychaind(damaged: true)
        let items = KeychainSecretItems(transport: keychaind)
        for _ in 0..<2 {
            #expect(throws: KeychainError.errSecDecode) {
                _ = try items.search(in: "login", matching: ["service": "imap"], at: nil)
            }
        }
        #expect(
            keychaind.asked.withLock { $0 } == [
                .searchSecretItemsWithContentTypes, .searchSecretItems, .searchSecretItemsWithContentTypes,
                .searchSecretItems,
            ])
    }
}
