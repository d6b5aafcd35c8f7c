import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which program draws the keychain's sheets on a terminal, chosen as gpg-agent chooses its
/// pinentry: the one configured, else the terminal pinentries Linux users already have, else
/// the keychain's own sheet.
///
/// The configuration is `KEYCHAIN_PINENTRY` in the environment of the program that draws
/// (keychaind, the prompt agent, an embedded app): a pinentry's path, or `none` for the
/// keychain's own sheet. Unset, it is `pinentry-curses`, then `pinentry-tty`, where installed
/// in `/usr/bin`. Desktop pinentries (`pinentry-gnome3`, `-gtk2`, `-qt`) are not chosen: a sheet
/// is drawn on the app's terminal.
public enum TerminalSheets: Sendable, Equatable {
    /// A pinentry program, at this path.
    case pinentry(String)
    /// The keychain's own sheet (``TerminalPrompt``).
    case keychain

    /// The terminal pinentries looked for, in order.
    public static let installedPinentries = ["/usr/bin/pinentry-curses", "/usr/bin/pinentry-tty"]

    /// The choice for `configured` (`KEYCHAIN_PINENTRY`'s value), given which files are programs.
    public static func choose(
        configured: String?, isProgram: (String) -> Bool = { access($0, X_OK) == 0 }
    ) -> TerminalSheets {
        if let configured, !configured.isEmpty {
            return configured == "none" ? .keychain : .pinentry(configured)
        }
        return installedPinentries.first(where: isProgram).map { .pinentry($0) } ?? .keychain
    }

    /// The choice for this process's environment.
    public static var configured: TerminalSheets {
        choose(configured: ProcessInfo.processInfo.environment["KEYCHAIN_PINENTRY"])
    }

    /// A sheet on `terminal` of type `terminalType`; `guardsProcess` as ``TerminalPrompt``'s.
    public func prompt(terminal: String, terminalType: String?, guardsProcess: Bool) -> any AuthenticationPrompt {
        switch self {
        case .pinentry(let program):
            PinentryPrompt(program: program, terminal: terminal, terminalType: terminalType)
        case .keychain:
            TerminalPrompt(terminal: terminal, guardsProcess: guardsProcess)
        }
    }

    /// What `keychainctl status` says of it.
    public var description: String {
        switch self {
        case .pinentry(let program): "\(URL(fileURLWithPath: program).lastPathComponent) (\(program))"
        case .keychain: "the keychain's own terminal sheet"
        }
    }
}
