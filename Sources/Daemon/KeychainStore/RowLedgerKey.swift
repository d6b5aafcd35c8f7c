import Foundation
import StorageContracts

extension RowLedger {
    /// A row identity as the ledger's memory keys it: the 16 random bytes every row the keychain
    /// writes has, held in two words with no allocation of their own (a ledger of 100,000 rows
    /// keeps them all); an identity of any other length, which only an altered database holds,
    /// kept as its bytes, so that it is still told apart and refused.
    struct Key: Hashable, Sendable {
        private let high: UInt64
        private let low: UInt64
        private let otherLength: Data?

        init(_ identity: Data) {
            self = identity.withUnsafeBytes { Key($0) }
        }

        init(_ identity: ColumnBytes) {
            self = identity.withUnsafeBytes { Key($0) }
        }

        private init(_ identity: UnsafeRawBufferPointer) {
            guard identity.count == 16 else {
                (high, low, otherLength) = (0, 0, Data(identity))
                return
            }
            var words = (UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: identity) }
            (high, low, otherLength) = (words.0, words.1, nil)
        }
    }
}
