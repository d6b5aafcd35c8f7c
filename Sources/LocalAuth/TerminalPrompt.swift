#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainProtocol

/// Apple's authentication sheet on the caller's terminal: the program's name, the reason, a
/// line asking for a touch when biometry is in play, and the buttons — Esc for Cancel, Enter
/// for the fallback. Passcode entry is hidden. Needs a terminal on standard input and output.
public struct TerminalPrompt: AuthenticationPrompt {
    /// A prompt on this process's terminal.
    public init() {}

    public var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    public func present(_ sheet: PromptSheet) -> any PromptSession {
        TerminalPromptSession(sheet)
    }
}

final class TerminalPromptSession: PromptSession {
    private var original = termios()
    private var dismissed = false

    init(_ sheet: PromptSheet) {
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        // Key by key, no echo, reads return at once: buttons are single keys.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        write(Self.render(sheet))
    }

    static func render(_ sheet: PromptSheet) -> String {
        var lines = ["\"\(sheet.programName)\" is trying to authenticate you.", sheet.reason]
        if sheet.asksForTouch { lines.append("Touch the fingerprint sensor.") }
        var buttons = "[Esc] \(sheet.cancelTitle)"
        if let fallback = sheet.fallbackTitle { buttons += "    [Enter] \(fallback)" }
        lines.append(buttons)
        let width = lines.map(\.count).max() ?? 0
        let border = String(repeating: "─", count: width + 2)
        return (["┌\(border)┐"] + lines.map { "│ \($0.padding(toLength: width, withPad: " ", startingAt: 0)) │" } + ["└\(border)┘"])
            .joined(separator: "\r\n") + "\r\n"
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
        write(message + "\r\n")
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
        guard !dismissed else { return }
        dismissed = true
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    deinit { dismiss() }

    private func readKey(waitMilliseconds: Int32) -> UInt8? {
        var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, waitMilliseconds) > 0 else { return nil }
        var byte: UInt8 = 0
        return Glibc.read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
