import Dispatch
import Foundation
import Synchronization
import Testing

@testable import KeychainDaemon

/// The daemon's connection threads: one that served a connection serves the next, a connection
/// never waits for another's thread, and the waiting ones are few and end.
@Suite struct ConnectionThreadsTests {
    /// Runs `body` as a connection's job and returns the thread it ran on, once it finished.
    private func threadOf(_ threads: ConnectionThreads, _ body: @escaping @Sendable () -> Void = {}) -> UInt {
        let ran = Mutex<UInt>(0)
        let done = DispatchSemaphore(value: 0)
        threads.run {
            body()
            ran.withLock { $0 = UInt(pthread_self()) }
            done.signal()
        }
        done.wait()
        return ran.withLock { $0 }
    }

    /// Waits up to five seconds for `condition`.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    @Test func aThreadThatServedAConnectionServesTheNext() {
        let threads = ConnectionThreads()
        let first = threadOf(threads)
        for _ in 0..<3 {
            // A job's end is seen before its thread waits again: a connection in between gets a
            // new thread rather than wait.
            #expect(eventually { threads.waitingCount == 1 })
            #expect(threadOf(threads) == first)
        }
    }

    @Test func aConnectionNeverWaitsForAnothersThread() {
        let threads = ConnectionThreads()
        let release = DispatchSemaphore(value: 0)
        let holder = Mutex<UInt>(0)
        let holding = DispatchSemaphore(value: 0)
        threads.run {
            holder.withLock { $0 = UInt(pthread_self()) }
            holding.signal()
            release.wait()
        }
        holding.wait()
        // The first connection holds its thread until the second has run: a second that waited
        // for it would never run.
        let second = threadOf(threads) { release.signal() }
        #expect(second != holder.withLock { $0 })
    }

    @Test func fewThreadsWaitAndEachEndsAfterItsLinger() {
        let threads = ConnectionThreads(linger: .seconds(2), keptWaiting: 1)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            threads.run {
                started.signal()
                release.wait()
            }
        }
        for _ in 0..<3 { started.wait() }
        for _ in 0..<3 { release.signal() }
        #expect(eventually { threads.waitingCount == 1 })
        usleep(100_000)
        #expect(threads.waitingCount == 1, "three finished, one kept")
        #expect(eventually { threads.waitingCount == 0 }, "the kept one ends after its linger")
    }
}
