import Foundation

#if canImport(Glibc)
import Glibc
#endif
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
    /// True once the asking app has exited: its sheet closes (and its terminal is restored)
    /// instead of waiting for an answer nobody will read.
    var askerHasExited: Bool { get }
}

extension PromptProvider {
    /// By default the asker is this process, which is still here.
    public var askerHasExited: Bool { false }
}

/// Sheets on a terminal: the one the request names, or else this process's controlling
/// terminal (`/dev/tty`), drawn as ``SheetProgram/configured`` says.
///
/// The embedded keychain's: there the app and the keychain are one process, the app's name is
/// its own word, and nothing is checked.
public struct TerminalPrompts: PromptProvider {
    public let appName: String

    /// Sheets for `appName`.
    public init(appName: String) {
        self.appName = appName
    }

    public func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt {
        guard let terminal = authentication.terminal ?? Self.controllingTerminal() else { return NoPrompt() }
        return SheetProgram.configuredForTerminal.prompt(
            terminal: terminal, terminalType: ProcessInfo.processInfo.environment["TERM"], guardsProcess: true)
    }

    /// This process's controlling terminal by its device's name (`/dev/pts/3`), which a program
    /// the keychain starts (a pinentry, in a session of its own) can open too.
    static func controllingTerminal() -> String? {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return ttyname(descriptor).map { String(cString: $0) }
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

/// No one to ask, for any app: the server's prompts when its host gives none.
public struct NoPrompts: PromptProvider {
    /// Prompts of a host that cannot show one.
    public init() {}

    public var appName: String { "" }

    public func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt { NoPrompt() }
}
