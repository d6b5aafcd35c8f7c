import CKeychainSupport
import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Apple's authentication sheet on the controlling terminal (`/dev/tty`), as `sudo`, `ssh` and
/// pinentry draw theirs: the program's name, the reason, a line asking for a touch when
/// biometry is in play, and the buttons — Esc for Cancel, Enter for the fallback. Passcode entry
/// is hidden. Standard input and output stay the program's, so `… -w | xclip` and `$(…)` work.
/// A process without a controlling terminal is not interactive. A program that asks on behalf
/// of another (the ssh agent, for the `ssh` that wants a signature) may name that one's terminal
/// instead.
///
/// The terminal's modes are restored when the sheet closes. A sheet of the process's own
/// (the embedded keychain's) restores them also on SIGINT, SIGTERM, SIGHUP, SIGTSTP and at exit
/// (`kc_terminal_guard_begin`, one stack per process); keychaind's, drawn on an app's terminal
/// while other sheets may be open, restores its own when it closes, which it does as soon as
/// the app is gone.
public struct TerminalPrompt: AuthenticationPrompt {
    /// The terminal device the sheet shows on.
    private let device: String
    /// The process's signals and exit restore the terminal.
    private let guardsProcess: Bool

    /// A prompt on the terminal device at `path` (`/dev/pts/3`). With `guardsProcess`, the
    /// process's signals and exit restore the terminal too (one sheet at a time per process).
    public init(terminal path: String, guardsProcess: Bool) {
        device = path
        self.guardsProcess = guardsProcess
    }

    public var isInteractive: Bool {
        let fd = open(device, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return isatty(fd) == 1
    }

    public func present(_ sheet: PromptSheet) -> any PromptSession {
        TerminalPromptSession(sheet, device: device, guardsProcess: guardsProcess)
    }
}

final class TerminalPromptSession: PromptSession {
    private let terminal: Int32
    private var dismissed = false
    /// The modes to restore, when the process's guard does not.
    private var saved: termios?

    init(_ sheet: PromptSheet, device: String, guardsProcess: Bool) {
        terminal = open(device, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return }
        var raw = termios()
        tcgetattr(terminal, &raw)
        let original = raw
        // Key by key, no echo, reads return at once: buttons are single keys.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        if !guardsProcess || kc_terminal_guard_begin(terminal, &raw, "", "") != 0 {
            saved = original
            tcsetattr(terminal, TCSAFLUSH, &raw)
        }
        var size = winsize()
        let columns = ioctl(terminal, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        write(Self.render(sheet, columns: columns))
    }

    /// The sheet as lines in a box no wider than `columns`: text from callers (the program's
    /// name, the reason, the titles) loses its control, escape and format characters and is cut
    /// to a bounded length, and long lines wrap inside the box. Every line of the reason is
    /// indented (``PromptText/reasonIndent``).
    static func render(_ sheet: PromptSheet, columns: Int = 80) -> String {
        var paragraphs = sheet.paragraphs
        var buttons = "[Esc] \(PromptText.clean(sheet.cancelTitle, limit: 40))"
        if let fallback = sheet.fallbackTitle { buttons += "    [Enter] \(PromptText.clean(fallback, limit: 40))" }
        paragraphs.append(buttons)
        let widest = paragraphs.map(\.count).max() ?? 0
        let width = max(8, min(widest + PromptText.reasonIndent.count, columns - 4))
        let reason = sheet.isQuestion ? nil : 1
        let lines = paragraphs.enumerated().flatMap { index, paragraph in
            index == reason
                ? PromptText.wrap(paragraph, width: width - PromptText.reasonIndent.count).map {
                    PromptText.reasonIndent + $0
                }
                : PromptText.wrap(paragraph, width: width)
        }
        let border = String(repeating: "─", count: width + 2)
        let framed = lines.map { "│ \($0.padding(toLength: width, withPad: " ", startingAt: 0)) │" }
        return (["┌\(border)┐"] + framed + ["└\(border)┘"]).joined(separator: "\r\n") + "\r\n"
    }

    func pressedButton() -> PromptButton? {
        while let key = readKey(waitMilliseconds: 0) {
            switch key {
            case 0x1b, UInt8(ascii: "c"), UInt8(ascii: "C"): return .cancel
            case 0x0d, 0x0a: return .fallback
            default: continue
            }
        }
        return nil
    }

    func show(_ message: String) {
        write("\r\u{1b}[K" + PromptText.clean(message, limit: 400) + "\r\n")
    }

    func update(_ message: String) {
        write("\r\u{1b}[K" + PromptText.clean(message, limit: 400))
    }

    func readPasscode(shouldStop: () -> Bool) -> SecretBytes? {
        write("Passcode: ")
        var bytes: [UInt8] = []
        defer { for i in bytes.indices { bytes[i] = 0 } }
        while !shouldStop() {
            guard let key = readKey(waitMilliseconds: 100) else { continue }
            switch key {
            case 0x0d, 0x0a:
                write("\r\n")
                return SecretBytes(bytes)
            case 0x1b:
                write("\r\n")
                return nil
            case 0x7f, 0x08:
                if !bytes.isEmpty { bytes.removeLast() }
            default:
                bytes.append(key)
            }
        }
        return nil
    }

    func dismiss() {
        guard !dismissed, terminal >= 0 else { return }
        dismissed = true
        if var saved {
            tcsetattr(terminal, TCSANOW, &saved)
        } else {
            kc_terminal_guard_end()
        }
        close(terminal)
    }

    deinit { dismiss() }

    private func readKey(waitMilliseconds: Int32) -> UInt8? {
        guard terminal >= 0 else { return 0x1b }
        var poller = pollfd(fd: terminal, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, waitMilliseconds) > 0 else { return nil }
        var byte: UInt8 = 0
        return Glibc.read(terminal, &byte, 1) == 1 ? byte : nil
    }

    private func write(_ text: String) {
        guard terminal >= 0 else { return }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(terminal, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
