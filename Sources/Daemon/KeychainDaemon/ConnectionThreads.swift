import Dispatch
import Foundation
import Synchronization

/// The threads that serve connections, one connection at a time each. A thread that finished
/// serving one waits ``linger`` for the next before it ends, and at most ``keptWaiting`` wait: a
/// client that connects for one request (a `keychainctl` lookup, each `secret-tool` the Secret
/// Service bridge acts for) then costs no thread made and ended, with its stack mapped and given
/// back. A connection never waits for a thread: when none is waiting, one is made.
///
/// A thread keeps no state of a connection it served: ``KeychainDaemon/admit(_:)``'s job holds
/// the connection's state in its own frames, which end when it returns, and the one task-local
/// value (``ItemRequestScope``) is bound for a request only. The stack it reuses is no different
/// from one glibc keeps from an ended thread for the next: secrets are wiped where they are used,
/// not by a thread's end.
final class ConnectionThreads: Sendable {
    /// How long a thread that served a connection waits for the next.
    let linger: DispatchTimeInterval
    /// How many threads wait at most; one more that finishes ends at once.
    let keptWaiting: Int
    private let waiting = Mutex<[Waiter]>([])

    /// Threads that wait `linger` for a connection, at most `keptWaiting` of them.
    init(linger: DispatchTimeInterval = .seconds(30), keptWaiting: Int = 4) {
        self.linger = linger
        self.keptWaiting = keptWaiting
    }

    /// Runs `serve` on a thread that is waiting, or on a new one (of 1 MiB of stack).
    func run(_ serve: @escaping @Sendable () -> Void) {
        if let waiter = waiting.withLock({ $0.popLast() }) {
            waiter.hand(serve)
            return
        }
        let thread = Thread { [self] in
            var next: (@Sendable () -> Void)? = serve
            while let job = next {
                job()
                next = nextJob()
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// How many threads are waiting for a connection now.
    var waitingCount: Int { waiting.withLock { $0.count } }

    /// The next connection's job for the calling thread, which just finished one; nil when
    /// enough threads wait already or none came within ``linger``: the thread ends.
    private func nextJob() -> (@Sendable () -> Void)? {
        let waiter = Waiter()
        let kept = waiting.withLock { waiters -> Bool in
            guard waiters.count < keptWaiting else { return false }
            waiters.append(waiter)
            return true
        }
        guard kept else { return nil }
        if waiter.arrived.wait(timeout: .now() + linger) == .timedOut {
            let stillWaiting = waiting.withLock { waiters -> Bool in
                guard let index = waiters.firstIndex(where: { $0 === waiter }) else { return false }
                waiters.remove(at: index)
                return true
            }
            if stillWaiting { return nil }
            // A connection took this thread as its wait ended: the job is on its way.
            waiter.arrived.wait()
        }
        return waiter.job.withLock { $0 }
    }

    /// One waiting thread's slot: the job handed to it, and the signal that it came.
    private final class Waiter: Sendable {
        let arrived = DispatchSemaphore(value: 0)
        let job = Mutex<(@Sendable () -> Void)?>(nil)

        func hand(_ serve: @escaping @Sendable () -> Void) {
            job.withLock { $0 = serve }
            arrived.signal()
        }
    }
}
