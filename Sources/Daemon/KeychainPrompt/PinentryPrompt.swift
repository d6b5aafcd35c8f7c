import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The sheet drawn by a pinentry program, as gpg-agent draws its passphrase prompts: on a
/// terminal (`pinentry-curses`, `pinentry-tty`, started with `--ttyname`), or in a window of
/// the app's desktop (`pinentry-gtk-2`, `pinentry-qt`, `pinentry-gnome3`, started with its
/// display). Started by the keychain, never by the app; the window's title names the app.
///
/// While a touch can answer, and for a question, the sheet is pinentry's confirmation
/// (`CONFIRM`): its OK button is the fallback ("Enter Passcode", "Allow"), its Cancel button
/// Cancel; a sheet without a fallback shows Cancel alone. Feedback ("Not recognized. 2 more
/// tries.") draws the confirmation again with the line under the reason. The passcode is
/// pinentry's `GETPIN`, with the last feedback as its error line (`SETERROR`); a stop (the app
/// cancelled or exited) ends the program.
public struct PinentryPrompt: AuthenticationPrompt {
    /// The pinentry program's path.
    public let program: String
    private let place: Place

    /// Where the sheet shows.
    public enum Place: Sendable {
        /// On a terminal (`/dev/pts/3`) of a type (the app's `TERM`, checked).
        case terminal(String, type: String?)
        /// In a window on the app's desktop.
        case desktop(DesktopDisplay)
    }

    /// A pinentry `program` drawing at `place`. A terminal type that is not letters, digits,
    /// `-`, `.`, `+` and `_` is taken as `xterm`.
    public init(program: String, place: Place) {
        self.program = program
        self.place = place
    }

    /// True for a plausible `TERM`: 1 to 64 ASCII letters, digits, `-`, `.`, `+` and `_`.
    static func isTerminalType(_ type: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.+_".unicodeScalars)
        return (1...64).contains(type.unicodeScalars.count) && type.unicodeScalars.allSatisfy(allowed.contains)
    }

    public var isInteractive: Bool {
        switch place {
        case .terminal(let terminal, _): TerminalPrompt(terminal: terminal, guardsProcess: false).isInteractive
        case .desktop: access(program, X_OK) == 0
        }
    }

    public func present(_ sheet: PromptSheet) -> any PromptSession {
        var arguments: [String] = []
        var environment = ["LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        switch place {
        case .terminal(let terminal, let type):
            let checked = type.flatMap { Self.isTerminalType($0) ? $0 : nil } ?? "xterm"
            arguments = ["--ttyname", terminal, "--ttytype", checked]
            environment["TERM"] = checked
        case .desktop(let display):
            environment.merge(display.variables) { _, desktop in desktop }
        }
        return PinentrySession(
            sheet,
            start: { [program, arguments, environment] in
                Pinentry(program: program, arguments: arguments, environment: environment)
            })
    }
}

/// One sheet through pinentry: one program run per confirmation or passcode entry.
final class PinentrySession: PromptSession {
    private let sheet: PromptSheet
    private let start: () -> Pinentry?
    /// The confirmation showing while a touch can answer.
    private var confirmation: Pinentry?
    /// The last line of feedback, shown on the next drawing.
    private var feedback: String?
    private var failed = false
    /// When the countdown of a passcode delay was last drawn, while it shows: pinentry draws a
    /// still dialog, so it is drawn again every ``countdownRedraw`` with the time left.
    private var countdownDrawn: ContinuousClock.Instant?
    /// How often a countdown is drawn again.
    static let countdownRedraw = Duration.seconds(5)

    init(_ sheet: PromptSheet, start: @escaping () -> Pinentry?) {
        self.sheet = sheet
        self.start = start
        if sheet.asksForTouch || sheet.isQuestion { confirm() }
    }

    /// What the sheet says, with the feedback under it.
    private var description: String { Self.description(sheet, feedback: sheet.asksForTouch ? feedback : nil) }

    /// The width, in ``PromptText/desktopColumns(_:)``, of each line of a reason on the desktop.
    /// pinentry's window wraps its text again only at a line wider than about 33 ems (GTK's
    /// guess, the width of a 66-character sample sentence, for a label that wraps): lines
    /// narrower than that stay as they are drawn here, each indented.
    static let reasonWidth = 30

    /// The window's text for `sheet`: its first line as it is; its reason in lines of at most
    /// ``reasonWidth`` columns, each behind ``PromptText/reasonIndent``, so that no line of it
    /// starts as the first line does, however pinentry's window wraps; then `feedback`.
    static func description(_ sheet: PromptSheet, feedback: String?) -> String {
        var lines: [String] = []
        for (index, paragraph) in sheet.paragraphs.enumerated() {
            if index == 1, !sheet.isQuestion {
                lines += PromptText.wrap(paragraph, width: reasonWidth, columns: PromptText.desktopColumns).map {
                    PromptText.reasonIndent + $0
                }
            } else {
                lines.append(paragraph)
            }
        }
        if let feedback { lines.append(PromptText.clean(feedback, limit: 400)) }
        return lines.joined(separator: "\n")
    }

    /// A pinentry with the title, description and buttons set.
    private func prepared() -> Pinentry? {
        guard let pinentry = start() else {
            failed = true
            return nil
        }
        pinentry.send("SETTITLE", "\(sheet.shownProgramName) — Keychain")
        pinentry.send("SETDESC", description)
        pinentry.send("SETCANCEL", PromptText.clean(sheet.cancelTitle, limit: 40))
        return pinentry
    }

    private func confirm() {
        confirmation?.end()
        confirmation = prepared()
        guard let confirmation else { return }
        if let fallback = sheet.fallbackTitle {
            confirmation.send("SETOK", PromptText.clean(fallback, limit: 40))
            _ = confirmation.start("CONFIRM")
        } else {
            confirmation.send("SETOK", PromptText.clean(sheet.cancelTitle, limit: 40))
            _ = confirmation.start("CONFIRM --one-button")
        }
    }

    func pressedButton() -> PromptButton? {
        if failed { return .cancel }
        guard let confirmation else { return nil }
        switch confirmation.poll(milliseconds: 0) {
        case .pending: return nil
        case .ok:
            self.confirmation = nil
            confirmation.end()
            // A countdown's one button is Cancel.
            return sheet.fallbackTitle == nil || countdownDrawn != nil ? .cancel : .fallback
        case .error, .gone:
            self.confirmation = nil
            confirmation.end()
            return .cancel
        }
    }

    func show(_ message: String) {
        feedback = message
        if countdownDrawn != nil {
            // The delay is over: the countdown goes, and the passcode entry says so.
            countdownDrawn = nil
            confirmation?.end()
            confirmation = nil
            return
        }
        if sheet.asksForTouch, confirmation != nil { confirm() }
    }

    /// A passcode delay's countdown (issue 53: pinentry showed nothing for the delay's length):
    /// the sheet with the time left and a Cancel button, drawn again every ``countdownRedraw``.
    func update(_ message: String) {
        feedback = message
        let now = ContinuousClock.now
        if let drawn = countdownDrawn, drawn.duration(to: now) < Self.countdownRedraw { return }
        countdownDrawn = now
        confirmation?.end()
        confirmation = prepared()
        guard let confirmation else { return }
        confirmation.send("SETDESC", Self.description(sheet, feedback: PromptText.clean(message, limit: 400)))
        confirmation.send("SETOK", PromptText.clean(sheet.cancelTitle, limit: 40))
        _ = confirmation.start("CONFIRM --one-button")
    }

    func readPasscode(shouldStop: () -> Bool) -> SecretBytes? {
        guard let pinentry = prepared() else { return nil }
        defer { pinentry.end() }
        pinentry.send("SETPROMPT", "Passcode:")
        if let feedback { pinentry.send("SETERROR", PromptText.clean(feedback, limit: 400)) }
        feedback = nil
        guard pinentry.start("GETPIN") else { return nil }
        while !shouldStop() {
            switch pinentry.poll(milliseconds: 100) {
            case .pending: continue
            case .ok(let passcode): return passcode
            case .error, .gone: return nil
            }
        }
        return nil
    }

    func dismiss() {
        confirmation?.end()
        confirmation = nil
    }

    deinit { dismiss() }
}
