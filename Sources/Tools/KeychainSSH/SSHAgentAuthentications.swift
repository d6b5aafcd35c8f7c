import Foundation
import Keychain
import Synchronization

/// The authentication contexts the agent signs with: a new one for every signature, or, with a
/// reuse window (`keychainctl ssh-agent --reuse-window SECONDS`, which Secretive's users asked
/// for), one that a touch keeps good for that many seconds, for one key, one client program
/// (its executable) and one purpose (a host, or a signature namespace): another program, or the
/// same one logging in elsewhere, is asked again.
public final class SSHAgentAuthentications: Sendable {
    /// What one kept authentication serves.
    private struct Use: Hashable {
        var key: String
        var executable: String
        var purpose: String
    }

    private let reuseWindow: Double
    private let contexts = Mutex<[Use: (context: LAContext, since: ContinuousClock.Instant)]>([:])

    /// - Parameter reuseWindow: Seconds one authentication serves a key's signatures; 0 asks
    ///   at every signature.
    public init(reuseWindow: Double) {
        self.reuseWindow = reuseWindow
    }

    /// The context a signature with `key` for `client` and `purpose` authenticates with,
    /// showing `reason` on the client's terminal when it has one, else on the agent's.
    func context(for key: String, client: SSHAgentClient, purpose: String, reason: String) -> LAContext {
        guard reuseWindow > 0 else { return Self.make(reason, client.terminal) }
        let use = Use(key: key, executable: client.executable, purpose: purpose)
        let now = ContinuousClock.now
        return contexts.withLock { contexts in
            if let kept = contexts[use], kept.since.duration(to: now) < .seconds(reuseWindow) {
                kept.context.localizedReason = reason
                return kept.context
            }
            contexts[use]?.context.invalidate()
            let context = Self.make(reason, client.terminal)
            contexts[use] = (context, now)
            return context
        }
    }

    private static func make(_ reason: String, _ terminal: String?) -> LAContext {
        let context = terminal.map { LAContext(promptTerminal: $0) } ?? LAContext()
        context.localizedReason = reason
        return context
    }
}
