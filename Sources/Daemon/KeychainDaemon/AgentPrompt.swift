import KeychainPrompt
import KeychainProtocol

/// A sheet the system daemon has its user's prompt agent draw on an app's desktop or terminal
/// (``PromptAgents``). The daemon keeps the authentication; the agent shows, and reports the
/// buttons and the passcode typed.
struct AgentPrompt: AuthenticationPrompt {
    /// Where the agent may draw the sheet.
    enum Place {
        /// A window on the app's desktop (``DesktopDisplay/variables``).
        case window([String: String])
        /// The app's terminal (a device of the agent's user) and its `TERM`.
        case terminal(String, type: String?)
    }

    let agent: PromptAgentChannel
    /// Where to draw, tried in order: a window first (the app shares its terminal), then the
    /// terminal when the agent has no desktop pinentry.
    let places: [Place]

    var isInteractive: Bool { agent.isAlive && !places.isEmpty }

    func present(_ sheet: PromptSheet) -> any PromptSession {
        agent.beginSheet()
        var shown = false
        for place in places where !shown {
            let command: PromptAgentCommand =
                switch place {
                case .window(let display): .presentInWindow(display: display, sheet: sheet)
                case .terminal(let terminal, let type): .present(terminal: terminal, terminalType: type, sheet: sheet)
                }
            if case .done? = agent.exchange(command) { shown = true }
        }
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
