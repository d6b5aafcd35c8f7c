import CKeychainSupport
import Foundation
import Keychain
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads secrets without ever taking them from arguments: from standard input when it is not a
/// terminal, otherwise from a prompt with echo turned off.
///
/// Standard input is read in large blocks into one buffer, never one byte per call, and never
/// beyond a bound: a line (a passcode) holds at most ``maximumLineLength`` bytes and an item's
/// secret at most `KeychainLimits.maximumSecretSize`; one byte more is refused with
/// `errSecDataTooLarge` before anything else is read. What is read and not yet used stays in
/// the buffer for the next line (a passcode change reads two or three) and is wiped as it is
/// used.
enum SecretInput {
    /// The longest passcode line accepted.
    static let maximumLineLength = 1024

    static var isTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Bytes read from standard input and not yet handed out, and whether it has ended.
    private static let pending = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))

    /// One line: typed at a hidden prompt on a terminal, or the next line of standard input.
    static func line(prompt: String) throws -> SecretBytes {
        if isTerminal {
            return try hiddenLine(prompt: prompt)
        }
        guard let line = try readLine() else {
            throw KeychainError(
                .errSecParam,
                "standard input ended before the "
                    + "\(prompt.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ": "))) was given"
            )
        }
        return line
    }

    /// A new passcode: asked twice on a terminal, once on standard input.
    static func newPasscode() throws -> SecretBytes {
        try newSecret(prompt: "New passcode: ", confirm: "Confirm new passcode: ", named: "passcodes")
    }

    /// A new secret (a passcode, a backup password): at `prompt` and again at `confirm` on a
    /// terminal, once on standard input. Two that differ are the two `named` that differ.
    static func newSecret(prompt: String, confirm: String, named: String) throws -> SecretBytes {
        let first = try line(prompt: prompt)
        guard isTerminal else { return first }
        let second = try hiddenLine(prompt: confirm)
        guard first.constantTimeEquals(second) else {
            throw KeychainError(.errSecParam, "the two \(named) differ; nothing was changed")
        }
        return first
    }

    /// An item's secret: all of standard input less one trailing newline, or a hidden line asked
    /// twice on a terminal (a typo would be stored, and nothing shows it).
    ///
    /// - Parameter allowEmpty: accept an empty secret; otherwise an empty one (a closed or empty
    ///   standard input) is refused, as it is nearly always a mistake.
    static func itemSecret(allowEmpty: Bool) throws -> SecretBytes {
        var secret: SecretBytes
        if isTerminal {
            secret = try newSecret(prompt: "Secret: ", confirm: "Secret again: ", named: "secrets")
        } else {
            let limit = KeychainLimits.maximumSecretSize
            // One byte more than the limit, plus a trailing newline, tells an oversized secret.
            try fill(upTo: limit + 2, stopAtNewline: false)
            secret = try pending.withLock { pending throws(KeychainError) -> SecretBytes in
                var bytes = pending.bytes
                defer { wipe(&bytes); wipe(&pending.bytes) }
                if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
                guard bytes.count <= limit else {
                    throw KeychainError(
                        .errSecDataTooLarge,
                        "the secret on standard input is larger than \(KeychainLimits.secretSizeInWords), the most an item "
                            + "holds; "
                            + "keep large data in a file encrypted with a key stored here"
                    )
                }
                return SecretBytes(bytes)
            }
        }
        guard allowEmpty || secret.count > 0 else {
            throw KeychainError(
                .errSecParam,
                "the secret is empty (standard input gave nothing); pipe the secret in, or pass --allow-empty to "
                    + "store an empty one"
            )
        }
        return secret
    }

    /// Reads standard input into the buffer until it holds `count` bytes, a newline (when
    /// `stopAtNewline`), or input ends.
    private static func fill(upTo count: Int, stopAtNewline: Bool) throws(KeychainError) {
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        defer { wipe(&block) }
        while true {
            let done = pending.withLock { pending in
                pending.ended || pending.bytes.count >= count
                    || (stopAtNewline && pending.bytes.contains(UInt8(ascii: "\n")))
            }
            if done { return }
            let wanted = min(block.count, count - pending.withLock { $0.bytes.count })
            let got = read(STDIN_FILENO, &block, wanted)
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw KeychainError(.errSecIO, "cannot read standard input: \(String(cString: strerror(errno)))")
            }
            pending.withLock { pending in
                if got == 0 { pending.ended = true } else { pending.bytes.append(contentsOf: block[0..<got]) }
            }
        }
    }

    /// The next line of standard input without its newline; nil when input ended before it.
    private static func readLine() throws(KeychainError) -> SecretBytes? {
        try fill(upTo: maximumLineLength + 1, stopAtNewline: true)
        return try pending.withLock { pending throws(KeychainError) -> SecretBytes? in
            guard !pending.bytes.isEmpty else { return nil }
            let newline = pending.bytes.firstIndex(of: UInt8(ascii: "\n"))
            guard let end = newline ?? (pending.ended ? pending.bytes.endIndex : nil), end <= maximumLineLength else {
                wipe(&pending.bytes)
                throw KeychainError(
                    .errSecDataTooLarge,
                    "a line on standard input is longer than \(maximumLineLength) bytes; a passcode is shorter")
            }
            var line = Array(pending.bytes[..<end])
            defer { wipe(&line) }
            // The rest is copied out first, so that no slice keeps the buffer: `old` is then its
            // only holder and is wiped in place (with a slice alive, the wipe went to a copy and
            // the line stayed in freed memory).
            let rest = Array(pending.bytes[min(end + 1, pending.bytes.endIndex)...])
            var old = pending.bytes
            pending.bytes = rest
            wipe(&old)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            return SecretBytes(line)
        }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }

    /// A line typed at `prompt` with echo off. The terminal's modes come back however the
    /// program ends (Ctrl-C, SIGTERM, SIGHUP, Ctrl-Z: `kc_terminal_guard_begin`).
    private static func hiddenLine(prompt: String) throws -> SecretBytes {
        var silent = termios()
        tcgetattr(STDIN_FILENO, &silent)
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo goes off before the prompt appears, so nothing typed after it is ever shown;
        // TCSAFLUSH drops anything typed before the prompt.
        let guarded = kc_terminal_guard_begin(STDIN_FILENO, &silent, "", "") == 0
        StandardError.write(prompt)
        defer {
            if guarded { kc_terminal_guard_end() }
            StandardError.write("\n")
        }
        guard let line = try readLine() else { throw KeychainError(.errSecUserCanceled, "no input was given") }
        return line
    }
}
