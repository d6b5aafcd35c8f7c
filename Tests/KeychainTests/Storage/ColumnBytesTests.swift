import Foundation
import StorageContracts
import Testing

@testable import KeychainStore

/// A row's identity or keyed hash read without an allocation (``ColumnBytes``) is the same
/// value as its bytes: equal exactly when the bytes are, the same bytes back, and the same row
/// to the row ledger as the `Data` it replaces. A column of an odd length, which only an altered
/// database holds, is still told apart.
@Suite struct ColumnBytesTests {
    private let samples: [Data] = [
        Data(), Data([0]), Data([0, 0]), Data(repeating: 7, count: 16), Data((0..<16).map { UInt8($0) }),
        Data((0..<16).map { UInt8(15 - $0) }), Data(repeating: 0, count: 32), Data((0..<32).map { UInt8($0) }),
        Data((0..<33).map { UInt8($0) }), Data((0..<34).map { UInt8($0) }), Data(repeating: 0, count: 33),
    ]

    @Test func theBytesComeBackAsTheyWere() {
        for sample in samples { #expect(ColumnBytes(sample).data == sample) }
    }

    @Test func equalExactlyWhenTheBytesAre() {
        for first in samples {
            for second in samples {
                #expect((ColumnBytes(first) == ColumnBytes(second)) == (first == second), "\(first) \(second)")
            }
        }
        #expect(Set(samples.map(ColumnBytes.init)).count == Set(samples).count)
    }

    @Test func theRowLedgerKnowsTheSameRowByEither() {
        for sample in samples {
            #expect(RowLedger.Key(ColumnBytes(sample)) == RowLedger.Key(sample))
        }
        #expect(Set(samples.map { RowLedger.Key(ColumnBytes($0)) }).count == Set(samples).count)
    }
}
