import Foundation
import KeychainProtocol
import Testing

@testable import KeychainServer

/// Issue 52, attack 2: a backup whose item was dated 10^300 seconds on was restored, and the
/// next sync trapped converting that date to milliseconds (`UInt64(_:)` of a Double out of
/// range) — in system mode, keychaind for every user, again after each restart. Dates are now
/// bounded where they are decoded, and the conversion is total.
@Suite struct HostileDateTests {
    static let hostile: [Double] = [1e300, -1e300, 253_402_300_800, -62_135_596_801, .greatestFiniteMagnitude]

    @Test func aDateBeyondTheYear9999IsRefusedWhereItIsRead() throws {
        for seconds in Self.hostile {
            let item = NewItem(
                itemClass: .genericPassword,
                attributes: ["svce": .string("s"), "acct": .string("a"), "cdat": .date(Date(timeIntervalSince1970: seconds))],
                secret: SecretBytes(utf8: "x"))
            #expect(throws: WireError.self, "\(seconds)") { _ = try RequestCoder.decode(RequestCoder.encode(.add(item))) }
        }
        let ordinary = NewItem(
            itemClass: .genericPassword,
            attributes: ["svce": .string("s"), "cdat": .date(Date(timeIntervalSince1970: 1_800_000_000))],
            secret: SecretBytes(utf8: "x"))
        #expect(throws: Never.self) { _ = try RequestCoder.decode(RequestCoder.encode(.add(ordinary))) }
    }

    @Test func millisecondsOfAnyDateDoNotTrap() {
        let latest: UInt64 = (1 << 48) - 1
        #expect(KeychainServer.milliseconds(Date(timeIntervalSince1970: 1e300)) == latest)
        #expect(KeychainServer.milliseconds(Date(timeIntervalSince1970: -1e300)) == 0)
        #expect(KeychainServer.milliseconds(Date(timeIntervalSince1970: .infinity)) == 0)
        #expect(KeychainServer.milliseconds(Date(timeIntervalSince1970: 1_800_000_000.5)) == 1_800_000_000_500)
    }

    @Test func aTimeoutOutsideADayIsRefused() {
        for timeout in [-1, 86_401, 1e300] {
            let body = RequestCoder.encode(.unlockByBiometry(timeout: timeout))
            #expect(throws: WireError.self, "\(timeout)") { _ = try RequestCoder.decode(body) }
        }
    }
}
