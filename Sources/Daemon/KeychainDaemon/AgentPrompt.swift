import KeychainPrompt
import KeychainProtocol

/// A sheet the system daemon has its user's prompt agent draw on an app's terminal
/// (``PromptAgents``). The daemon keeps the authentication; the agent shows, and reports the
/// buttons and the passcode typed.
struct AgentPrompt: AuthenticationPrompt {
    let agent: PromptAgentChannel
    /// The app's terminal (a device of the agent's user).
    let terminal: String

    var isInteractive: Bool { agent.isAlive }

    func present(_ sheet: PromptSheet) -> any PromptSession {
        agent.beginSheet()
        var shown = false
        if case .done? = agent.exchange(.present(terminal: terminal, sheet: sheet)) { shown = true }
        return AgentPromptSession(agent: agent, shown: shown)
    }
}

/// One sheet through the agent. A sheet the agent could not show, or an agent that stopped
/// answering, reads as Cancel.
final class AgentPromptSession: PromptSession {
    private let agent: PromptAgentChannel
    private let shown: Bool
    private var dismissed = false

    init(agent: PromptAgentChannel, shown: Bool) {
        self.agent = agent
        self.shown = shown
    }

    func pressedButton() -> PromptButton? {
        guard shown else { return .cancel }
        switch agent.exchange(.pollButton) {
        case .pressed(let cancel)?: return cancel ? .cancel : .fallback
        case .done?: return nil
        default: return .cancel
        }
    }

    func show(_ message: String) {
        if shown { _ = agent.exchange(.show(message)) }
    }

    func update(_ message: String) {
        if shown { _ = agent.exchange(.update(message)) }
    }

    func readPasscode(shouldStop: () -> Bool) -> SecretBytes? {
        guard shown else { return nil }
        return agent.readPasscode(shouldStop: shouldStop)
    }

    func dismiss() {
        guard !dismissed else { return }
        dismissed = true
        if shown { _ = agent.exchange(.dismiss) }
        agent.endSheet()
    }

    deinit { dismiss() }
}
