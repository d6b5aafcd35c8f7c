import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// One run of `git`, never through a shell: an empty signal mask, no descriptor of keychaind's
/// (``CleanSpawn``), a fixed environment, its standard input from bytes the keychain made (an
/// unnamed file), its output and errors read together up to a bound, and at most `timeout`
/// seconds before it is killed by its pid.
struct GitCommand {
    /// How long a command that reaches the remote (a fetch, a push) may take.
    static let networkTimeout: Double = 60
    /// How long a command on the local repository alone may take.
    static let localTimeout: Double = 60
    /// The most output read from one command: the largest snapshot the transport reads, and room.
    static let maximumOutput = 600 << 20

    let executable: String
    let environment: [String: String]
    /// What starts git confined to its repository (`keychaind --confined-exec DIR ROOT`), and
    /// the directory nothing else beneath which git may read (the keychain's, or every user's);
    /// nil runs git as it is.
    var confinement: (launcher: [String], privateRoot: String)? = nil

    struct Output {
        var status: Int32
        var bytes: [UInt8]
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// Runs `git -C directory arguments…` with `input` on its standard input (none: `/dev/null`).
    ///
    /// - Throws: `errSecIO` when git cannot be started or ran out of time; `errSecDecode` when it
    ///   wrote more than ``maximumOutput`` bytes (it is killed).
    func run(
        _ arguments: [String], in directory: URL, input: [UInt8]? = nil, timeout: Double = localTimeout
    ) throws(KeychainError) -> Output {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else {
            throw KeychainError(.errSecIO, "cannot make a pipe for git: \(String(cString: strerror(errno)))")
        }
        defer { close(ends[0]) }
        let standardInput: CleanSpawn.Stream
        var inputFile: Int32 = -1
        if let input {
            do {
                inputFile = try Self.unnamedFile(holding: input, in: directory)
            } catch {
                close(ends[1])
                throw error
            }
            standardInput = .descriptor(inputFile)
        } else {
            standardInput = .null
        }
        let command = ["git", "-C", directory.path] + arguments
        let line =
            confinement.map { $0.launcher + [directory.path, $0.privateRoot, executable] + command.dropFirst() }
            ?? [executable] + command.dropFirst()
        let spawned = CleanSpawn.spawn(
            line[0], arguments: [confinement == nil ? "git" : line[0]] + line.dropFirst(), environment: environment,
            standardStreams: (standardInput, .descriptor(ends[1]), .descriptor(ends[1])))
        close(ends[1])
        if inputFile >= 0 { close(inputFile) }
        guard case .success(let pid) = spawned else {
            throw KeychainError(.errSecIO, "cannot start \(executable): \(spawned)")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(timeout)
        var descriptor = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        var tooLong = false
        while Date() < deadline {
            guard poll(&descriptor, 1, 100) >= 0 || errno == EINTR else { break }
            guard descriptor.revents != 0 else { continue }
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            guard output.count + count <= Self.maximumOutput else {
                tooLong = true
                break
            }
            output.append(contentsOf: buffer[0..<count])
        }
        let late = Date() >= deadline
        if late || tooLong { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard !late else {
            throw KeychainError(.errSecIO, "git \(arguments.first { !$0.hasPrefix("-") } ?? "") took more than \(Int(timeout)) s")
        }
        guard !tooLong else {
            throw KeychainError(.errSecDecode, "git wrote more than \(Self.maximumOutput >> 20) MiB: the remote holds more than a circle")
        }
        let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Output(status: exited, bytes: output)
    }

    /// A file with no name in `directory` (`O_TMPFILE`), holding `bytes`, read from its start.
    private static func unnamedFile(holding bytes: [UInt8], in directory: URL) throws(KeychainError) -> Int32 {
        let fd = kc_open_unnamed(directory.path)
        guard fd >= 0 else {
            throw KeychainError(.errSecIO, "cannot make git's input in \(directory.path): \(String(cString: strerror(errno)))")
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                close(fd)
                throw KeychainError(.errSecIO, "cannot write git's input: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        lseek(fd, 0, SEEK_SET)
        return fd
    }
}
