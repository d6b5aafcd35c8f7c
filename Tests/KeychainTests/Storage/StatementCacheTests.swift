import Foundation
import Testing

@testable import KeychainStore

/// A search's SQL has as many placeholders as it has values, so each number of values is
/// another statement: whatever a client asks, the statements a read connection keeps stay
/// bounded (a daemon serving many apps must not grow without end).
@Suite struct StatementCacheTests {
    @Test func searchesOfEveryShapeKeepAReadersStatementsBounded() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "statement-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try KeychainStore(url: folder.appendingPathComponent("keychain.db"), ledger: ConstantRowLedger())
        _ = try store.stamp(keychainID: "statement-cache", deletingRows: false)
        var kept: [Int] = []
        for count in 1...(3 * ReadConnection.preparedLimit) {
            let identities = (0..<count).map { Data([UInt8($0 & 0xFF), UInt8($0 >> 8)]) }
            let (found, prepared) = try store.read { transaction throws -> (Int, Int) in
                let rows = try transaction.rows(
                    RowFilter(itemClass: "genp", accessGroupHashes: nil, synchronizable: nil, identities: identities))
                guard case .reader(let reader) = transaction.connection else { return (rows.count, -1) }
                return (rows.count, reader.preparedCount)
            }
            #expect(found == 0)
            kept.append(prepared)
        }
        #expect(!kept.contains(-1), "reads ran on a read connection")
        // At most the limit from earlier reads, and this read's own statements.
        #expect(kept.max()! <= ReadConnection.preparedLimit + 4)
        #expect(kept.max()! > ReadConnection.preparedLimit / 2, "the connection kept its statements between reads")
    }
}
