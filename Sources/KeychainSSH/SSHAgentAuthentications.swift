import Foundation
import Keychain
import Synchronization

/// The authentication contexts the agent signs with: a new one for every signature, or, with a
/// reuse window (`keychainctl ssh-agent --reuse-window SECONDS`, which Secretive's users asked
/// for), one per key that a touch keeps good for that many seconds.
public final class SSHAgentAuthentications: Sendable {
    private let reuseWindow: Double
    private let contexts = Mutex<[String: (context: LAContext, since: ContinuousClock.Instant)]>([:])

    /// - Parameter reuseWindow: Seconds one authentication serves a key's signatures; 0 asks
    ///   at every signature.
    public init(reuseWindow: Double) {
        self.reuseWindow = reuseWindow
    }

    /// The context a signature with `key` authenticates with, showing `reason` on `terminal`
    /// (the client's) when the client has one, else on the agent's.
    func context(for key: String, reason: String, terminal: String?) -> LAContext {
        guard reuseWindow > 0 else { return Self.make(reason, terminal) }
        let now = ContinuousClock.now
        return contexts.withLock { contexts in
            if let kept = contexts[key], kept.since.duration(to: now) < .seconds(reuseWindow) {
                kept.context.localizedReason = reason
                return kept.context
            }
            contexts[key]?.context.invalidate()
            let context = Self.make(reason, terminal)
            contexts[key] = (context, now)
            return context
        }
    }

    private static func make(_ reason: String, _ terminal: String?) -> LAContext {
        let context = terminal.map { LAContext(prompt: TerminalPrompt(terminal: $0)) } ?? LAContext()
        context.localizedReason = reason
        return context
    }
}
