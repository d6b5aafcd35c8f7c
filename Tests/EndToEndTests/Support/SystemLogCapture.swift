import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system log as a PAM module writes it (`pam_syslog`, through `/dev/log`): the test binds
/// that socket itself, as no syslog daemon runs on a test machine, and keeps every line.
///
/// A syslog daemon that already listens there is not displaced: the test then cannot read what
/// the module says, and says so.
final class SystemLogCapture: Sendable {
    static let path = "/dev/log"
    private let socket: Int32
    private let received = ReceivedLines()

    init() throws {
        if FileManager.default.fileExists(atPath: Self.path) {
            try #require(
                !Self.someoneListens(), "a syslog daemon listens at /dev/log; stop it to read what the PAM module logs")
            unlink(Self.path)
        }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(socket >= 0)
        self.socket = socket
        var address = Self.address()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0, "cannot bind /dev/log: \(String(cString: strerror(errno)))")
        chmod(Self.path, 0o666)
        let received = received
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let line = String(decoding: buffer[0..<count], as: UTF8.self)
                received.lines.withLock { $0.append(line) }
            }
        }
    }

    /// What the reading thread has received, shared with it.
    private final class ReceivedLines: Sendable {
        let lines = Mutex<[String]>([])
    }

    deinit {
        unlink(Self.path)
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    /// Every line so far that contains `text`.
    func lines(containing text: String) -> [String] {
        received.lines.withLock { $0.filter { $0.contains(text) } }
    }

    /// Waits up to `seconds` for a line that contains `text`; true when one came.
    func waitFor(_ text: String, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !lines(containing: text).isEmpty { return true }
            usleep(20_000)
        }
        return false
    }

    private static func address() -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        return address
    }

    private static func someoneListens() -> Bool {
        let probe = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        var address = address()
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
