import Enclave
import Foundation
import Keychain
import KeychainServer
import Synchronization

/// The row ledger's check when a keychain is opened: the first read of a generation recomputes
/// the ledger from every row (one scan of identities and versions, one keyed hash per row); the
/// reads after it check each row against the versions in memory.
///
///     .build/release/keychain-benchmark ledger [items…]
enum LedgerCheck {
    static func run(counts: [Int], scratch: URL) throws {
        for count in counts {
            let directory = scratch.appendingPathComponent("ledger-\(count)")
            let caller = CallerIdentity(accessGroups: ["bench"])
            let server = try KeychainServer(directory: directory, cache: ProcessClassKeyCache())
            // Filled by 16 writers at once, so that group commit shares the fsyncs.
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 16) { writer in
                for i in stride(from: writer, to: count, by: 16) {
                    let item = NewItem(itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string("account-\(i)")], secret: SecretBytes(utf8: "secret-\(i)"))
                    if (try? server.handle(.add(item), caller: caller)) == nil { failures.add(1, ordering: .relaxed) }
                }
            }
            precondition(failures.load(ordering: .relaxed) == 0, "adds failed")
            let query = ItemQuery(itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string("account-\(count / 2)")], returns: .data)
            var (first, warm) = (Timings(), Timings())
            for _ in 0..<7 {
                // A keychain opened anew, as keychaind does after a restart.
                let reopened = try KeychainServer(directory: directory, cache: ProcessClassKeyCache())
                try first.measure { _ = try reopened.handle(.copyMatching(query), caller: caller) }
                try warm.measure { _ = try reopened.handle(.copyMatching(query), caller: caller) }
            }
            print("row ledger at \(count) items: first read after opening median \(format(first.median)) (min \(format(first.percentile(0))), n=\(first.samples.count)); next read \(format(warm.median)); the check costs about \(format(first.median - warm.median))")
        }
    }
}
