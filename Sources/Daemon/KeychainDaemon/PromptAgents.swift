import Synchronization

/// The system daemon's prompt agents: at most one per user (``KeychainRequest/servePrompts``).
///
/// The system daemon runs as its own user and cannot open a user's terminal or window, so the
/// sheets of a user's apps are drawn by that user's agent: a program root registered as one
/// (`"prompt-agent": true` in its registry file), trusted as any registered app is (installed
/// by root, untraced, the pinned file), running as that user. It is one per user, not per login
/// session: it draws on the asking app's own desktop or terminal, whatever session the app runs
/// in. A second agent of the same user is refused while the first runs.
final class PromptAgents: Sendable {
    private let agents = Mutex<[UInt32: PromptAgentChannel]>([:])

    /// The live agent of `uid`, if any.
    func agent(for uid: UInt32) -> PromptAgentChannel? {
        agents.withLock { agents in agents[uid].flatMap { $0.isAlive ? $0 : nil } }
    }

    /// Makes `channel` the agent of `uid`; false when a live one already is.
    func register(_ channel: PromptAgentChannel, uid: UInt32) -> Bool {
        agents.withLock { agents in
            if let current = agents[uid], current.isAlive { return false }
            agents[uid] = channel
            return true
        }
    }

    /// Forgets `channel`, when it is still `uid`'s agent.
    func remove(_ channel: PromptAgentChannel, uid: UInt32) {
        agents.withLock { agents in
            if agents[uid] === channel { agents[uid] = nil }
        }
    }
}
