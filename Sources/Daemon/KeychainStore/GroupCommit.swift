import Foundation
import GRDB

/// Group commit: writes that wait at the same moment share one transaction, so one fsync makes
/// them all durable. Each write still runs in a savepoint of its own (a failing one is rolled
/// back alone) and is acknowledged only after the shared transaction committed.
///
/// The first writer that finds no commit under way leads: it takes every write waiting, runs
/// them, commits, and wakes their writers; writes that arrive meanwhile wait for the next
/// group, which one of them leads. A writer blocks until its write is done, so its closure never
/// outlives the call.
final class GroupCommit: @unchecked Sendable {
    /// One write waiting to be committed. `done` changes with ``condition`` locked; `error` is
    /// set by the leader before it takes the lock to mark the group done.
    final class Write: @unchecked Sendable {
        let body: (StoreTransaction) throws -> Void
        let purging: Bool
        /// A stamp: the row ledger is made anew (``RowLedger/working(_:resetting:)``).
        let resettingLedger: Bool
        var done = false
        var error: (any Error)?

        init(purging: Bool, resettingLedger: Bool, _ body: @escaping (StoreTransaction) throws -> Void) {
            self.body = body
            self.purging = purging
            self.resettingLedger = resettingLedger
        }
    }

    // @unchecked: every field below is read and written with `condition` locked.
    private let condition = NSCondition()
    private var waiting: [Write] = []
    private var leading = false

    /// Runs `write`'s body in a group; returns when its group committed (or failed). `commit`
    /// runs one group's bodies and records each one's error.
    func submit(_ write: Write, commit: ([Write]) -> Void) {
        condition.lock()
        waiting.append(write)
        while !write.done {
            if leading {
                condition.wait()
                continue
            }
            leading = true
            let group = waiting
            waiting = []
            condition.unlock()
            commit(group)
            condition.lock()
            for member in group { member.done = true }
            leading = false
            condition.broadcast()
        }
        condition.unlock()
    }
}
