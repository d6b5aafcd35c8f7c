import Enclave
import KeychainProtocol
import Synchronization

/// What each authentication context earned: the Enclave's grants, filed under the context's
/// name and the connection that evaluated.
///
/// Grants never leave the server (DESIGN.md: "keys, grants and touches never leave it"). A
/// request naming a context gets the grants filed under that name *for its own connection*; a
/// name replayed from another connection, or guessed, finds nothing. Everything is forgotten on
/// `invalidate()`, when the connection closes, and for every context at once on lock, passcode
/// change and enrollment change. The Enclave still checks each grant's tag, boot and age.
final class AuthenticationContexts: Sendable {
    private struct Key: Hashable {
        var connection: UInt64
        var context: AuthenticationContextID
    }

    /// Most contexts one connection may hold: an app that makes contexts in a loop cannot grow
    /// the server without bound. The oldest is forgotten first.
    static let limitPerConnection = 64

    private struct Earned {
        var grants: [Key: [AuthenticationGrant]] = [:]
        /// Keys in the order they were first filed, oldest first.
        var order: [Key] = []
    }

    private let earned = Mutex(Earned())

    /// Files `grant` under `context` for `caller`'s connection.
    func record(_ grant: AuthenticationGrant, context: AuthenticationContextID, caller: CallerIdentity) {
        let key = Key(connection: caller.connection, context: context)
        earned.withLock { earned in
            if earned.grants[key] == nil {
                earned.order.append(key)
                let mine = earned.order.filter { $0.connection == key.connection }
                if mine.count > Self.limitPerConnection, let oldest = mine.first {
                    earned.grants[oldest] = nil
                    earned.order.removeAll { $0 == oldest }
                }
            }
            earned.grants[key, default: []].append(grant)
        }
    }

    /// The grants `context` earned on `caller`'s connection.
    func grants(_ context: AuthenticationContextID?, caller: CallerIdentity) -> [AuthenticationGrant] {
        guard let context else { return [] }
        return earned.withLock { $0.grants[Key(connection: caller.connection, context: context)] ?? [] }
    }

    /// Forgets what `context` earned on `caller`'s connection.
    func invalidate(_ context: AuthenticationContextID, caller: CallerIdentity) {
        forget { $0 == Key(connection: caller.connection, context: context) }
    }

    /// Forgets every context of a connection that closed.
    func endConnection(_ connection: UInt64) {
        forget { $0.connection == connection }
    }

    /// Forgets every context (lock, passcode change, enrollment change).
    func revokeAll() {
        forget { _ in true }
    }

    private func forget(_ matching: (Key) -> Bool) {
        earned.withLock { earned in
            for key in earned.order where matching(key) { earned.grants[key] = nil }
            earned.order.removeAll(where: matching)
        }
    }
}
