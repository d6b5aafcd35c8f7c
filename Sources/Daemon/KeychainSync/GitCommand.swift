import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// One run of `git`, never through a shell: an empty signal mask, no descriptor of keychaind's
/// (``CleanSpawn``), a fixed environment, its output and errors read together, and at most
/// ``timeout`` seconds before it is killed by its pid.
struct GitCommand {
    /// How long one git command may take: a fetch or push over a slow network included.
    static let timeout: Double = 300

    let executable: String
    let environment: [String: String]

    struct Output {
        var status: Int32
        var text: String
    }

    /// Runs `git -C directory arguments…`.
    ///
    /// - Throws: `errSecIO` when git cannot be started, or ran out of time.
    func run(_ arguments: [String], in directory: URL) throws(KeychainError) -> Output {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else {
            throw KeychainError(.errSecIO, "cannot make a pipe for git: \(String(cString: strerror(errno)))")
        }
        let spawned = CleanSpawn.spawn(
            executable, arguments: ["git", "-C", directory.path] + arguments, environment: environment,
            standardStreams: (.null, .descriptor(ends[1]), .descriptor(ends[1])))
        close(ends[1])
        defer { close(ends[0]) }
        guard case .success(let pid) = spawned else {
            throw KeychainError(.errSecIO, "cannot start \(executable): \(spawned)")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(Self.timeout)
        var descriptor = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        while Date() < deadline {
            guard poll(&descriptor, 1, 100) >= 0 || errno == EINTR else { break }
            guard descriptor.revents != 0 else { continue }
            let count = read(ends[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: buffer[0..<count])
        }
        if Date() >= deadline { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard Date() < deadline else {
            throw KeychainError(.errSecIO, "git \(arguments.first ?? "") took more than \(Int(Self.timeout)) s")
        }
        let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Output(status: exited, text: String(decoding: output, as: UTF8.self))
    }
}
