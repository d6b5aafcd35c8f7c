import Foundation
import Keychain
import KeychainServer
import Testing

/// An item moved in from another store (`keychain-secret-service import`) keeps its dates; a
/// date in the future, or a modification before the creation, is refused and adds nothing.
@Suite struct KeptDatesTests {
    private func item(_ account: String, _ dates: KeptDates) -> NewItem {
        var item = NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("moved"), "acct": .string(account)],
            secret: SecretBytes(utf8: "x"))
        item.keptDates = dates
        return item
    }

    @Test func pastDatesAreKeptAndFutureOrReversedOnesRefused() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let transport = keychain.transport()
        let created = Date(timeIntervalSince1970: 1_600_000_000)
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        _ = try transport.perform(.add(item("kept", KeptDates(created: created, modified: modified))))
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["acct": .string("kept")], returns: .attributes)
        guard case .items(let found) = try transport.perform(.copyMatching(query)) else {
            throw KeychainError.errSecInternalComponent
        }
        #expect(found.first?.attributes?["cdat"] == .date(created))
        #expect(found.first?.attributes?["mdat"] == .date(modified))

        let future = Date().addingTimeInterval(3600)
        for (account, dates) in [
            ("future", KeptDates(created: created, modified: future)),
            ("reversed", KeptDates(created: modified, modified: created)),
        ] {
            #expect(throws: KeychainError.errSecParam) { _ = try transport.perform(.add(item(account, dates))) }
            let missing = ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string(account)])
            #expect(throws: KeychainError.errSecItemNotFound) { _ = try transport.perform(.copyMatching(missing)) }
        }
    }
}
