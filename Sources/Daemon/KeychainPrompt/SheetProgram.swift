import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which program draws the keychain's sheets, chosen as gpg-agent chooses its pinentry: the one
/// configured; else, for an app on a desktop, a desktop pinentry; else the terminal pinentries
/// Linux users already have; else the keychain's own terminal sheet.
///
/// The configuration is `KEYCHAIN_PINENTRY` in the environment of the program that draws
/// (keychaind, the prompt agent, an embedded app): a pinentry's path, or `none` for the
/// keychain's own sheet. Unset, a desktop app gets `pinentry-gtk-2`, `pinentry-qt` or
/// `pinentry-gnome3`, and a terminal `pinentry-curses` or `pinentry-tty`, the first installed in
/// `/usr/bin`.
public enum SheetProgram: Sendable, Equatable {
    /// A pinentry program, at this path.
    case pinentry(String)
    /// The keychain's own sheet (``TerminalPrompt``).
    case keychain

    /// The terminal pinentries looked for, in order.
    public static let installedPinentries = ["/usr/bin/pinentry-curses", "/usr/bin/pinentry-tty"]

    /// The choice for `configured` (`KEYCHAIN_PINENTRY`'s value), given which files are programs.
    public static func forTerminal(
        configured: String?, isProgram: (String) -> Bool = { access($0, X_OK) == 0 }
    ) -> SheetProgram {
        if let configured, !configured.isEmpty {
            return configured == "none" ? .keychain : .pinentry(configured)
        }
        return installedPinentries.first(where: isProgram).map { .pinentry($0) } ?? .keychain
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
            return configured == "none" || installedPinentries.contains(configured) ? nil : configured
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
