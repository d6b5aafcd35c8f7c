import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which program draws the keychain's sheets: the one configured; else, for an app on a
/// desktop, a desktop pinentry, as gpg-agent chooses one; else, on a terminal, the keychain's own
/// sheet.
///
/// The configuration is `KEYCHAIN_PINENTRY` in the environment of the program that draws
/// (keychaind, the prompt agent, an embedded app): a pinentry's path, or `none` for the
/// keychain's own sheet. Unset, a desktop app gets `pinentry-gtk-2`, `pinentry-qt` or
/// `pinentry-gnome3`, the first installed in `/usr/bin`, and a terminal the keychain's own
/// sheet: `pinentry-curses` ignores Escape (only Tab, Tab, Enter cancel) and cannot count a
/// passcode delay down, where the keychain's sheet takes Esc as Cancel and counts down live
/// (issue 53). A terminal pinentry is used when configured.
public enum SheetProgram: Sendable, Equatable {
    /// A pinentry program, at this path.
    case pinentry(String)
    /// The keychain's own sheet (``TerminalPrompt``).
    case keychain

    /// The terminal pinentries: configured, they draw on the app's terminal, never a desktop.
    public static let terminalPinentries = ["/usr/bin/pinentry-curses", "/usr/bin/pinentry-tty"]

    /// The choice for `configured` (`KEYCHAIN_PINENTRY`'s value), given which files are programs.
    public static func forTerminal(configured: String?) -> SheetProgram {
        if let configured, !configured.isEmpty, configured != "none" { return .pinentry(configured) }
        return .keychain
    }

    /// The choice for this process's environment.
    public static var configuredForTerminal: SheetProgram {
        forTerminal(configured: ProcessInfo.processInfo.environment["KEYCHAIN_PINENTRY"])
    }

    /// The desktop pinentries looked for, in order, for an app on a desktop.
    public static let desktopPinentries = [
        "/usr/bin/pinentry-gtk-2", "/usr/bin/pinentry-qt", "/usr/bin/pinentry-gnome3",
    ]

    /// The pinentry for an app on a desktop: the configured one, else the first desktop
    /// pinentry installed; nil with `none` or a terminal's pinentry configured, or none
    /// installed.
    public static var configuredForDesktop: String? {
        forDesktop(configured: ProcessInfo.processInfo.environment["KEYCHAIN_PINENTRY"])
    }

    /// The desktop pinentry, ``forDesktop(configured:isProgram:)``, given which files are programs.
    public static func forDesktop(
        configured: String?, isProgram: (String) -> Bool = { access($0, X_OK) == 0 }
    ) -> String? {
        if let configured, !configured.isEmpty {
            // A terminal's pinentry configured draws on the app's terminal, not on its desktop.
            return configured == "none" || terminalPinentries.contains(configured) ? nil : configured
        }
        return desktopPinentries.first(where: isProgram)
    }

    /// A sheet on `terminal` of type `terminalType`; `guardsProcess` as ``TerminalPrompt``'s.
    public func prompt(terminal: String, terminalType: String?, guardsProcess: Bool) -> any AuthenticationPrompt {
        switch self {
        case .pinentry(let program):
            PinentryPrompt(program: program, place: .terminal(terminal, type: terminalType))
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
