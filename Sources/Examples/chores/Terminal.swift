import CKeychainSupport
import Foundation
import Keychain

#if canImport(Glibc)
import Glibc
#endif

/// The full-screen terminal: raw keys (UTF-8 text and escape sequences), whole-screen redraws,
/// line entry with a cursor. The alternate screen and the terminal's modes are restored on
/// exit, on SIGINT, SIGTERM, SIGHUP, and around SIGTSTP (`kc_terminal_guard_begin`).
final class Terminal {
    enum Key: Equatable {
        case character(Character)
        case enter, escape, up, down, left, right, home, end, backspace, delete
        /// The window changed size or the program was continued after a stop: draw again.
        case redraw
        /// A key or sequence with no meaning here.
        case other
    }

    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    init() {
        var raw = termios()
        tcgetattr(STDIN_FILENO, &raw)
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // The alternate screen, as full-screen programs use.
        if kc_terminal_guard_begin(STDIN_FILENO, &raw, "\u{1b}[?1049h", "\u{1b}[?1049l") != 0 {
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
    }

    func restore() {
        kc_terminal_guard_end()
    }

    /// Clears the screen and draws `lines`.
    func draw(_ lines: [String]) {
        write("\u{1b}[2J\u{1b}[H" + lines.joined(separator: "\r\n") + "\r\n")
    }

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// The next key; nil when input ended. Waits, but answers ``Key/redraw`` as soon as the
    /// window changes or the program is continued.
    func readKey() -> Key? {
        while true {
            if kc_terminal_guard_take_redraw() != 0 { return .redraw }
            guard waitForInput(milliseconds: 100) else { continue }
            guard let byte = readByte() else { return nil }
            switch byte {
            case 0x0d, 0x0a: return .enter
            case 0x7f, 0x08: return .backspace
            case 0x1b: return escapeSequence()
            case 0x00..<0x20: return .other
            case 0x80...: return utf8Character(startingWith: byte)
            default: return .character(Character(UnicodeScalar(byte)))
            }
        }
    }

    /// ESC alone is Escape; ESC [ or ESC O starts a sequence (arrows, Home, End, Delete, and
    /// others, which are read whole and ignored).
    private func escapeSequence() -> Key {
        guard waitForInput(milliseconds: 50), let introducer = readByte() else { return .escape }
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return .other }
        var parameters = ""
        while waitForInput(milliseconds: 50), let byte = readByte() {
            guard (0x40...0x7e).contains(byte) else {
                parameters.append(Character(UnicodeScalar(byte)))
                continue
            }
            switch (UnicodeScalar(byte), parameters) {
            case ("A", _): return .up
            case ("B", _): return .down
            case ("C", _): return .right
            case ("D", _): return .left
            case ("H", _), ("~", "1"), ("~", "7"): return .home
            case ("F", _), ("~", "4"), ("~", "8"): return .end
            case ("~", "3"): return .delete
            default: return .other
            }
        }
        return .other
    }

    /// A character of several UTF-8 bytes; ``Key/other`` for bytes that are not UTF-8.
    private func utf8Character(startingWith lead: UInt8) -> Key {
        let length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0
        guard length > 0 else { return .other }
        var bytes = [lead]
        while bytes.count < length, waitForInput(milliseconds: 50), let byte = readByte() { bytes.append(byte) }
        guard let text = String(validating: bytes, as: UTF8.self), let character = text.first, text.count == 1 else {
            return .other
        }
        return .character(character)
    }

    /// A secret typed after `label`, never shown, kept only in protected memory; nil on Escape.
    func readSecret(_ label: String) -> SecretBytes? {
        write(label)
        var bytes: [UInt8] = []
        defer { for i in bytes.indices { bytes[i] = 0 } }
        while let key = readKey() {
            switch key {
            case .enter:
                write("\r\n")
                return SecretBytes(bytes)
            case .escape:
                write("\r\n")
                return nil
            case .backspace:
                if !bytes.isEmpty { bytes.removeLast() }
            case .character(let character):
                bytes.append(contentsOf: Array(String(character).utf8))
            default:
                continue
            }
        }
        return nil
    }

    /// A line typed after `label`, shown as typed, with a cursor that Left, Right, Home and End
    /// move; Backspace and Delete remove around it. Nil on Escape.
    func readLine(_ label: String, initial: String = "") -> String? {
        var text = Array(initial)
        var cursor = text.count
        func show() {
            let after = text.count - cursor
            write("\r" + label + String(text) + "\u{1b}[K" + (after > 0 ? "\u{1b}[\(after)D" : ""))
        }
        show()
        while let key = readKey() {
            switch key {
            case .enter:
                write("\r\n")
                return String(text)
            case .escape:
                write("\r\n")
                return nil
            case .backspace where cursor > 0:
                text.remove(at: cursor - 1)
                cursor -= 1
            case .delete where cursor < text.count:
                text.remove(at: cursor)
            case .left: cursor = max(cursor - 1, 0)
            case .right: cursor = min(cursor + 1, text.count)
            case .home: cursor = 0
            case .end: cursor = text.count
            case .character(let character):
                text.insert(character, at: cursor)
                cursor += 1
            default:
                break
            }
            show()
        }
        return nil
    }

    private func waitForInput(milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) > 0
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            return count == 1 ? byte : nil
        }
    }
}
