import Foundation
import Keychain
import KeychainServer
import KeychainStore
import Synchronization
import Testing

/// Writes that wait at the same moment share one transaction and its fsync, and each is still
/// its own: acknowledged only once durable, rolled back alone when it fails (issue: "one fsync
/// covers every write waiting at that moment").
@Suite struct GroupCommitTests {
    @Test func concurrentAddsShareCommitsAndEachSucceedsOrFailsAlone() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let transport = keychain.transport()
        _ = try transport.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["svce": .string("s"), "acct": .string("taken")],
                    secret: SecretBytes(utf8: "x"))))
        let before = try #require(try KeychainStore.inspect(keychain.databaseURL)).generation
        let (writers, each) = (16, 20)
        let outcomes = Mutex<[Int32]>([])
        // A thread per writer: `concurrentPerform` runs as many at once as there are cores, and
        // with two cores two writers only take turns leading (CI saw 320 commits for 320 writes).
        let finished = DispatchGroup()
        for writer in 0..<writers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for index in 0..<each {
                    // Every writer also tries the account that is taken: those fail, the rest land.
                    let account = index == 0 ? "taken" : "w\(writer)-\(index)"
                    let item = NewItem(
                        itemClass: .genericPassword, attributes: ["svce": .string("s"), "acct": .string(account)],
                        secret: SecretBytes(utf8: account))
                    let status: Int32
                    do throws(KeychainError) {
                        _ = try transport.perform(.add(item))
                        status = 0
                    } catch {
                        status = error.status
                    }
                    outcomes.withLock { $0.append(status) }
                }
            }.start()
        }
        finished.wait()
        let statuses = outcomes.withLock { $0 }
        #expect(statuses.filter { $0 == KeychainError.errSecDuplicateItem.status }.count == writers)
        #expect(statuses.filter { $0 == 0 }.count == writers * (each - 1))
        for writer in 0..<writers {
            for index in 1..<each {
                let query = ItemQuery(
                    itemClass: .genericPassword,
                    attributes: ["svce": .string("s"), "acct": .string("w\(writer)-\(index)")], returns: .data)
                guard case .items(let found) = try transport.perform(.copyMatching(query)) else {
                    throw KeychainError.errSecInternalComponent
                }
                #expect(found.first?.secret?.copyData() == Data("w\(writer)-\(index)".utf8))
            }
        }
        // Fewer commits than successful writes (one each without group commit): some
        // transactions carried several.
        let commits = try #require(try KeychainStore.inspect(keychain.databaseURL)).generation - before
        #expect(commits < UInt64(writers * (each - 1)), "\(commits) commits for \(writers * (each - 1)) writes")
        #expect(commits > 0)
    }
}
