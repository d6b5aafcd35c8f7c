import Foundation
import KeychainProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A keychain of its own served by `keychaind`: programs run with `KEYCHAIN_MODE=daemon` and a
/// runtime directory of the test's, and every daemon the test started is stopped by its pid
/// when the test ends.
final class DaemonHarness {
    let shell: CommandRunner
    let runtime: URL

    /// A keychain whose programs run in this process's environment plus `extra`; with
    /// `idleLock`, its daemon is started at once with that idle time.
    init(idleLock: Double? = nil, extra: [String: String] = [:]) throws {
        runtime = URL(fileURLWithPath: "/tmp/kcd-\(UUID().uuidString.prefix(8))")
        var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        environment["KEYCHAIN_MODE"] = "daemon"
        // keychaind is found on PATH by programs that are not beside it (copies of keychainctl).
        environment["PATH"] =
            CommandRunner.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        shell = try CommandRunner(environment: environment, runtime: runtime)
        if let idleLock {
            let started = try shell.run(["daemon", "start", "--idle-lock", String(idleLock)])
            guard started.status == 0 else { throw POSIXError(.EIO) }
        }
    }

    var environment: [String: String] { shell.environment }
    var socket: String { runtime.appendingPathComponent("keychain/socket").path }

    /// The running daemon's pid, from its status.
    func daemonPID() throws -> Int32? {
        try shell.daemonPID()
    }

    /// A copy of keychainctl at another path: another app, as the daemon sees it.
    func copyOfKeychainctl(named name: String) throws -> URL {
        let copy = shell.home.appendingPathComponent(name)
        try FileManager.default.copyItem(at: CommandRunner.binary, to: copy)
        return copy
    }

    /// Runs `executable arguments…` in this keychain's environment.
    func run(_ executable: URL, _ arguments: [String], input: String = "") throws -> CommandRunner.Output {
        let quoted = ([executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try shell.script("printf %s '\(input)' | \(quoted)")
    }

    /// Stops the daemon and removes the files.
    func cleanUp() {
        shell.cleanUp()
    }
}

/// A client that speaks the wire format by hand: for what a well-behaved client never sends.
final class RawDaemonClient {
    private let descriptor: Int32
    /// The daemon's greeting (nil: it closed the connection without one).
    private(set) var greeting: Result<KeychainReply, KeychainError>?

    /// Connects to `path`; with `awaitingGreeting`, reads the greeting the daemon sends once it
    /// has identified this process, as a client must before it writes.
    init(socket path: String, awaitingGreeting: Bool = true) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if awaitingGreeting { greeting = reply() }
    }

    deinit { close(descriptor) }

    /// Sends raw bytes; false when the connection is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends a request as a well-formed frame.
    func send(_ request: KeychainRequest) {
        let body = RequestCoder.encode(request)
        send(WireFrame.header(body.count) + body)
    }

    /// Ends the sending side (the daemon sees the end of the stream).
    func finishSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The next reply; nil when the daemon closed the connection first.
    func reply() -> Result<KeychainReply, KeychainError>? {
        guard let header = read(WireFrame.headerSize), let body = read(WireFrame.bodyLength(header)) else { return nil }
        return try? ReplyCoder.decode(body)
    }

    /// True when the daemon closed the connection (end of stream, nothing more to read).
    var isClosedByDaemon: Bool { read(1) == nil }

    /// True when the daemon has already closed the connection; false, without waiting, while it
    /// is open with nothing to read.
    var isClosedAlready: Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    /// The status code of the next reply: 0 for a result.
    func replyStatus() -> Int32? {
        switch reply() {
        case .success?: 0
        case .failure(let error)?: error.status
        case nil: nil
        }
    }

    /// Sends `request` and waits for its reply.
    func exchange(_ request: KeychainRequest) -> Result<KeychainReply, KeychainError>? {
        send(request)
        return reply()
    }

    private func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let read = bytes.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress! + received, count - received, 0)
            }
            guard read > 0 else { return nil }
            received += read
        }
        return bytes
    }
}
