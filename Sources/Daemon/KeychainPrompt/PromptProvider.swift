import KeychainProtocol

/// Where the keychain draws the sheet for one owner authentication, and the name it shows on it.
///
/// The host of the keychain server provides one per request: keychaind draws on the terminal of
/// the process it identified, the embedded keychain on its own process's terminal, tests a
/// script. The name on the sheet comes from here, never from the request.
public protocol PromptProvider: Sendable {
    /// The asking app's name, as the host identified it.
    var appName: String { get }
    /// The prompt for `authentication`; one that is not interactive when no one can answer.
    func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt
}

/// Sheets on a terminal: the one the request names, or else `fallbackTerminal`.
///
/// The embedded keychain uses it with this process's controlling terminal (`/dev/tty`) and its
/// own name: there the app and the keychain are one process, and nothing is checked.
public struct TerminalPrompts: PromptProvider {
    public let appName: String
    private let fallbackTerminal: String?

    /// Sheets for `appName`, on the terminal a request names or on `fallbackTerminal` (none: not
    /// interactive).
    public init(appName: String, fallbackTerminal: String? = "/dev/tty") {
        self.appName = appName
        self.fallbackTerminal = fallbackTerminal
    }

    public func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt {
        guard let terminal = authentication.terminal ?? fallbackTerminal else { return NoPrompt() }
        return TerminalPrompt(terminal: terminal)
    }
}

/// No one to ask: every owner authentication fails with `notInteractive`, at once.
public struct NoPrompt: AuthenticationPrompt {
    /// The prompt of a host that cannot show one.
    public init() {}

    public var isInteractive: Bool { false }

    public func present(_ sheet: PromptSheet) -> any PromptSession {
        preconditionFailure("a prompt that is not interactive is never presented")
    }
}
