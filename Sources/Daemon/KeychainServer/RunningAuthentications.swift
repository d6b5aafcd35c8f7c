import KeychainProtocol
import Synchronization

/// The owner authentications under way, by context, so that `LAContext.invalidate()` can end
/// one from another thread of the app (which reaches the keychain on a connection of its own
/// while the first waits for the sheet).
///
/// Cancelling needs only the context's name, which is 16 random bytes that never leave the app:
/// a name guessed or replayed can end a sheet at most, never earn anything.
final class RunningAuthentications: Sendable {
    private struct Running {
        var contexts: [AuthenticationContextID: Int] = [:]
        var cancelled: Set<AuthenticationContextID> = []
    }

    private let running = Mutex(Running())

    /// Notes that an authentication of `context` started; pair with ``end(_:)``.
    func begin(_ context: AuthenticationContextID) {
        running.withLock { $0.contexts[context, default: 0] += 1 }
    }

    /// Notes that an authentication of `context` ended; the cancellation is forgotten with the
    /// last one.
    func end(_ context: AuthenticationContextID) {
        running.withLock { running in
            let left = (running.contexts[context] ?? 1) - 1
            running.contexts[context] = left > 0 ? left : nil
            if left <= 0 { running.cancelled.remove(context) }
        }
    }

    /// Ends the authentications of `context` under way (none: nothing happens).
    func cancel(_ context: AuthenticationContextID) {
        running.withLock { running in
            if running.contexts[context] != nil { running.cancelled.insert(context) }
        }
    }

    /// True once ``cancel(_:)`` was called for `context` during its authentication.
    func isCancelled(_ context: AuthenticationContextID) -> Bool {
        running.withLock { $0.cancelled.contains(context) }
    }
}
