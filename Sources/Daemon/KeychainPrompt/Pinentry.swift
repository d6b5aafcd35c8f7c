import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// One run of a pinentry program (gpg-agent's prompts: `pinentry-curses`, `pinentry-tty`,
/// `pinentry-gnome3`…), spoken to in the Assuan protocol on its standard input and output.
///
/// Started with the default signal mask and dispositions, in a session of its own, with only
/// the two pipes (both `O_CLOEXEC` on this side) and `/dev/null` for its errors, and ended by
/// its pid: ``end()`` signals it and reaps it. Text from callers is cleaned of control
/// characters and percent-escaped before it is sent; a PIN read back is wiped once decoded.
final class Pinentry {
    /// What one command brought back.
    enum Reply {
        /// `OK`, with the data lines (`D …`) before it, decoded.
        case ok(SecretBytes)
        /// `ERR code text`: 83886179 is "Operation cancelled" (Cancel, or the window closed).
        case error(code: Int)
        /// Nothing yet.
        case pending
        /// The program exited or broke the protocol.
        case gone
    }

    private let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var data: [UInt8] = []
    private var ended = false

    /// Starts `program` with `arguments` and `environment`, and reads its greeting; nil when it
    /// cannot be started or does not greet.
    init?(program: String, arguments: [String], environment: [String: String]) {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&toChild) == 0 else { return nil }
        guard kc_pipe_cloexec(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            return nil
        }
        let spawned = CleanSpawn.spawn(
            program, arguments: [program] + arguments, environment: environment,
            standardStreams: (.descriptor(toChild[0]), .descriptor(fromChild[1]), .null))
        close(toChild[0])
        close(fromChild[1])
        guard case .success(let child) = spawned else {
            close(toChild[1]); close(fromChild[0])
            return nil
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
        guard case .ok = waitForReply(seconds: 10) else {
            end()
            return nil
        }
    }

    deinit { end() }

    /// Sends `command` with `text` (cleaned and percent-escaped) and waits for its answer.
    @discardableResult
    func send(_ command: String, _ text: String? = nil, seconds: Double = 10) -> Reply {
        guard start(command, text) else { return .gone }
        return waitForReply(seconds: seconds)
    }

    /// Sends `command` without waiting: its answer comes through ``poll()``.
    func start(_ command: String, _ text: String? = nil) -> Bool {
        let line = text.map { "\(command) \(Self.escaped($0))\n" } ?? "\(command)\n"
        let bytes = Array(line.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// The answer to the command under way, waiting at most `milliseconds`.
    func poll(milliseconds: Int32) -> Reply {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, milliseconds)) * 1_000_000
        while true {
            if let reply = takeLine() { return reply }
            let left = Int64(deadline) - Int64(DispatchTime.now().uptimeNanoseconds)
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&poller, 1, Int32(max(0, left / 1_000_000)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return .pending }
            var chunk = [UInt8](repeating: 0, count: 1024)
            let count = read(output, &chunk, chunk.count)
            defer { wipe(&chunk) }
            guard count > 0 else { return .gone }
            buffer += chunk[0..<count]
        }
    }

    private func waitForReply(seconds: Double) -> Reply {
        let reply = poll(milliseconds: Int32(seconds * 1000))
        if case .pending = reply { return .gone }
        return reply
    }

    /// Ends the program: closes its input, signals it, and reaps it.
    func end() {
        guard !ended else { return }
        ended = true
        close(input)
        close(output)
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        wipe(&buffer)
        wipe(&data)
    }

    /// One whole line from the buffer, as a reply when it ends a command (`D` lines are kept).
    private func takeLine() -> Reply? {
        while let newline = buffer.firstIndex(of: 0x0a) {
            var line = Array(buffer[..<newline])
            buffer.removeSubrange(...newline)
            defer { wipe(&line) }
            if line.starts(with: Array("OK".utf8)) && (line.count == 2 || line[2] == 0x20) {
                var decoded = Self.unescaped(data)
                defer {
                    wipe(&data)
                    wipe(&decoded)
                }
                return .ok(SecretBytes(decoded))
            }
            if line.starts(with: Array("ERR ".utf8)) {
                let code = line.dropFirst(4).prefix { $0 >= 0x30 && $0 <= 0x39 }
                return .error(code: Int(String(decoding: code, as: UTF8.self)) ?? 0)
            }
            if line.starts(with: Array("D ".utf8)) { data += line.dropFirst(2) }
            // Status (`S`), comments (`#`) and inquiries go unanswered.
        }
        return nil
    }

    private func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }

    /// `text` for an Assuan line: control characters gone, `%`, CR and LF escaped, newlines kept
    /// as `%0A` (pinentry shows them as line breaks).
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": escaped += "%25"
            case "\n": escaped += "%0A"
            case "\r": escaped += "%0D"
            default: if scalar.value >= 0x20 && scalar.value != 0x7f { escaped.unicodeScalars.append(scalar) }
            }
        }
        return escaped
    }

    /// The bytes of an Assuan data line, `%XX` decoded.
    static func unescaped(_ bytes: [UInt8]) -> [UInt8] {
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                decoded.append(value)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }
}
