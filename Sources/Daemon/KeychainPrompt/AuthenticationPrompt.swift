import KeychainProtocol

/// What the prompt shows: Apple's sheet, in words.
public struct PromptSheet: Sendable, Hashable {
    /// The program asking ("keychainctl", "chores").
    public var programName: String
    /// Why it asks (`localizedReason`).
    public var reason: String
    /// True while biometry is in play: the sheet tells the user to touch the sensor.
    public var asksForTouch: Bool
    /// The Cancel button's title.
    public var cancelTitle: String
    /// The fallback button's title, or nil when the sheet has no fallback button.
    public var fallbackTitle: String?

    /// Creates a sheet.
    public init(programName: String, reason: String, asksForTouch: Bool, cancelTitle: String, fallbackTitle: String?) {
        self.programName = programName
        self.reason = reason
        self.asksForTouch = asksForTouch
        self.cancelTitle = cancelTitle
        self.fallbackTitle = fallbackTitle
    }
}

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
