#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Keychain

/// Reads secrets without ever taking them from arguments: from standard input when it is not a
/// terminal, otherwise from a prompt with echo turned off.
enum SecretInput {
    static var isTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// One line: typed at a hidden prompt on a terminal, or the next line of standard input.
    static func line(prompt: String) throws -> SecretBytes {
        if isTerminal {
            return try hiddenLine(prompt: prompt)
        }
        guard let line = readLine() else {
            throw KeychainError(.errSecParam, "standard input ended before the \(prompt.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ": "))) was given")
        }
        return line
    }

    /// A new passcode: asked twice on a terminal, once on standard input.
    static func newPasscode() throws -> SecretBytes {
        let first = try line(prompt: "New passcode: ")
        guard isTerminal else { return first }
        let second = try hiddenLine(prompt: "Confirm new passcode: ")
        guard first.constantTimeEquals(second) else {
            throw KeychainError(.errSecParam, "the two passcodes differ; nothing was changed")
        }
        return first
    }

    /// An item's secret: all of standard input less one trailing newline, or a hidden line.
    static func itemSecret() throws -> SecretBytes {
        if isTerminal { return try hiddenLine(prompt: "Secret: ") }
        var bytes = FileHandle.standardInput.readDataToEndOfFile()
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return SecretBytes(bytes)
    }

    private static func readLine() -> SecretBytes? {
        var bytes: [UInt8] = []
        defer { for i in bytes.indices { bytes[i] = 0 } }
        var byte: UInt8 = 0
        var sawAny = false
        while read(STDIN_FILENO, &byte, 1) == 1 {
            sawAny = true
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        if !sawAny { return nil }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return SecretBytes(bytes)
    }

    private static func hiddenLine(prompt: String) throws -> SecretBytes {
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo goes off before the prompt appears, so nothing typed after it is ever shown;
        // TCSAFLUSH drops anything typed before the prompt.
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        FileHandle.standardError.write(Data(prompt.utf8))
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = readLine() else { throw KeychainError(.errSecUserCanceled, "no input was given") }
        return line
    }
}
