import Foundation
import StorageContracts
import Testing

@testable import KeychainStore

/// A row's identity or keyed hash read without an allocation (``ColumnBytes``) is the same
/// value as its bytes: equal exactly when the bytes are, the same bytes back, and the same row
/// to the row ledger as the `Data` it replaces. More bytes than the keychain writes in such a
/// column are refused.
@Suite struct ColumnBytesTests {
    private let samples: [Data] = [
        Data(), Data([0]), Data([0, 0]), Data(repeating: 7, count: 16), Data((0..<16).map { UInt8($0) }),
        Data((0..<16).map { UInt8(15 - $0) }), Data(repeating: 0, count: 31), Data(repeating: 0, count: 32),
        Data((0..<32).map { UInt8($0) }), Data((0..<32).map { UInt8(31 - $0) }),
    ]

    private func held(_ data: Data) throws -> ColumnBytes {
        try #require(ColumnBytes(data), "\(data.count) bytes")
    }

    @Test func theBytesComeBackAsTheyWere() throws {
        for sample in samples { #expect(try held(sample).data == sample) }
    }

    @Test func moreThan32BytesAreRefused() {
        #expect(ColumnBytes(Data(repeating: 0, count: 33)) == nil)
        #expect(ColumnBytes(Data((0..<64).map { UInt8($0) })) == nil)
    }

    @Test func equalExactlyWhenTheBytesAre() throws {
        for first in samples {
            for second in samples {
                #expect((try held(first) == held(second)) == (first == second), "\(first) \(second)")
            }
        }
        #expect(Set(try samples.map(held)).count == Set(samples).count)
    }

    @Test func theRowLedgerKnowsTheSameRowByEither() throws {
        for sample in samples {
            #expect(RowLedger.Key(try held(sample)) == RowLedger.Key(sample))
        }
        #expect(Set(try samples.map { RowLedger.Key(try held($0)) }).count == Set(samples).count)
    }
}
