#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Keychain

/// The full-screen terminal: raw keys, whole-screen redraws, line entry.
final class Terminal {
    private var original = termios()

    enum Key: Equatable {
        case character(Character)
        case enter, escape, up, down, backspace
    }

    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    init() {
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        write("\u{1b}[?1049h")  // alternate screen, as full-screen programs do
    }

    func restore() {
        write("\u{1b}[?1049l")
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    /// Clears the screen and draws `lines`.
    func draw(_ lines: [String]) {
        write("\u{1b}[2J\u{1b}[H" + lines.joined(separator: "\r\n") + "\r\n")
    }

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// The next key (blocking).
    func readKey() -> Key? {
        guard let byte = readByte() else { return nil }
        switch byte {
        case 0x0d, 0x0a: return .enter
        case 0x7f, 0x08: return .backspace
        case 0x1b:
            // An arrow arrives as ESC [ A/B; a lone ESC is Escape.
            var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0, readByte() == UInt8(ascii: "["), let arrow = readByte() else { return .escape }
            return arrow == UInt8(ascii: "A") ? .up : arrow == UInt8(ascii: "B") ? .down : nil
        default: return .character(Character(UnicodeScalar(byte)))
        }
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
            case .up, .down:
                continue
            }
        }
        return nil
    }

    /// A line typed after `label`, shown as typed; nil on Escape.
    func readLine(_ label: String, initial: String = "") -> String? {
        var text = initial
        write(label + text)
        while let key = readKey() {
            switch key {
            case .enter:
                write("\r\n")
                return text
            case .escape:
                write("\r\n")
                return nil
            case .backspace:
                if !text.isEmpty {
                    text.removeLast()
                    write("\u{8} \u{8}")
                }
            case .character(let character):
                text.append(character)
                write(String(character))
            case .up, .down:
                continue
            }
        }
        return nil
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        return Glibc.read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }
}
