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

    /// Forgets `context` from the window: its client went away while it asked.
    func forget(_ context: LAContext) {
        contexts.withLock { contexts in contexts = contexts.filter { $0.value.context !== context } }
    }

    /// A context for one signature alone, which no window keeps: a signature over a forwarded
    /// connection is asked for every time, and never served by, nor adds to, a window.
    func context(once reason: String, client: SSHAgentClient) -> LAContext {
        Self.make(reason, client.terminal)
    }

    /// Asks the owner on `context`'s sheet (a touch or the passcode), for a key whose own access
    /// control would not: true once the owner answered.
    static func askOwner(_ context: LAContext, reason: String) -> Bool {
        let answered = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: reason) { success, _ in
            answered.withLock { $0 = success }
            done.signal()
        }
        done.wait()
        return answered.withLock { $0 }
    }

    private static func make(_ reason: String, _ terminal: String?) -> LAContext {
        let context = terminal.map { LAContext(promptTerminal: $0) } ?? LAContext()
        context.localizedReason = reason
        return context
    }
}
