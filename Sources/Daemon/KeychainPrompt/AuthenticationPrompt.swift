import KeychainProtocol

/// A button on the sheet.
public enum PromptButton: Sendable, Hashable {
    case cancel
    case fallback
}

/// Shows the authentication sheet. The prompt only shows and asks; the Enclave decides.
/// Implementations: ``TerminalPrompt``; tests script their own; a graphical agent can be added.
public protocol AuthenticationPrompt: Sendable {
    /// False when no one can answer (no terminal): evaluations then fail with `notInteractive`.
    var isInteractive: Bool { get }
    /// Shows the sheet until the session is dismissed.
    func present(_ sheet: PromptSheet) -> any PromptSession
}

/// One showing of the sheet.
public protocol PromptSession: AnyObject {
    /// A button the user pressed since the last call, without waiting.
    func pressedButton() -> PromptButton?
    /// A line of feedback ("Not recognized. 2 more tries.").
    func show(_ message: String)
    /// A line that replaces the previous `update` on the sheet (a countdown).
    func update(_ message: String)
    /// Asks for the passcode with hidden entry; nil when the user canceled, or when
    /// `shouldStop` became true while waiting.
    func readPasscode(shouldStop: () -> Bool) -> SecretBytes?
    /// Removes the sheet and restores the terminal.
    func dismiss()
}

extension PromptSession {
    /// By default an update is a new line of feedback.
    public func update(_ message: String) { show(message) }
}
