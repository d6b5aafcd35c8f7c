import CKeychainSupport
import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// One connection to `keychaind`: frames out, frames in (``WireFrame``), blocking.
///
/// Connecting checks, through the kernel, that the process listening runs as the expected user
/// (this user for the per-user daemon, the keychaind user for the system one): a socket planted
/// by someone else is refused. Then it waits for the daemon's greeting, sent once the daemon has
/// identified this process (the daemon refuses a request written before it), and makes the
/// process undumpable (``ProcessHardening``'s core): from then on no other process of the
/// user can attach a debugger to it, read its memory or take its descriptors (`pidfd_getfd`),
/// and it leaves no core dump. That is what an app pays for talking to the keychain; the
/// daemon refuses any request on this connection that another process writes.
final class DaemonConnection {
    private let descriptor: Int32
    /// The process that connected: after a `fork`, the child must connect anew (the daemon
    /// answers only the process it identified).
    let owner = getpid()
    /// The daemon's process, as the kernel recorded it when this connected.
    let daemonPID: Int32
    /// The keychain's change number keychaind shared on this connection, once asked
    /// (``DaemonTransport/changeStamp()``); it ends with the connection.
    var changeNumber: ChangeNumberMapping?
    /// True once the change number was asked for on this connection, given or not.
    var askedForChangeNumber = false

    /// The daemon stopped answering on this connection.
    enum Failure: Error {
        /// Nothing was sent: the request can be sent again on a new connection.
        case notSent(Int32)
        /// The request went out and no reply came: it may or may not have been carried out.
        case noReply(String)
    }

    /// Connects to the socket at `path`; nil when no daemon listens there.
    ///
    /// A process that made itself undumpable (on an earlier connection) cannot be identified by
    /// a per-user daemon, which has no privilege over it: to reach one again (the daemon
    /// restarted), it is dumpable from the connection until the greeting, then undumpable again.
    ///
    /// - Parameter listener: the uid the listening process must run as: this user's for the
    ///   per-user daemon. For another user's (the system daemon's), root's is taken too: systemd
    ///   listens on the socket as root and hands it to the daemon, and a listener of root's
    ///   can only be root's doing, whom nothing here protects against.
    init?(path: String, listener: uid_t = getuid()) throws(KeychainError) {
        if listener == getuid(), kc_is_dumpable() == 0 { _ = kc_set_dumpable() }
        // Undumpable on every way out: identified, refused, or no daemon there.
        defer { _ = kc_set_not_dumpable() }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KeychainError(.errSecParam, "the keychain daemon's socket path is too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw KeychainError(.errSecIO, "cannot create a socket: \(String(cString: strerror(errno)))")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0, uid == listener || (listener != getuid() && uid == 0)
        else {
            close(descriptor)
            throw KeychainError(
                .errSecInvalidKeychain,
                "the process listening on \(path) runs as uid \(uid), not \(listener); not trusting it")
        }
        self.descriptor = descriptor
        daemonPID = pid
        try awaitGreeting()
    }

    /// Seconds to wait for the greeting: a daemon that sends none (an older version) is not
    /// waited for forever.
    private static let greetingTimeout = 30
    /// Why no reply came, when the daemon closed the connection.
    private static let closedByDaemon = "the daemon closed the connection"

    /// Reads the daemon's greeting: nothing, or why it refuses this process.
    private func awaitGreeting() throws(KeychainError) {
        let body: [UInt8]
        var timeout = timeval(tv_sec: Self.greetingTimeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var none = timeval()
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }
        do throws(Failure) {
            body = try receive(try bodyLength())
        } catch {
            let reason =
                switch error {
                case .noReply(let reason): reason
                case .notSent(let code): String(cString: strerror(code))
                }
            // A timeout is a daemon that never greets (an older one); anything else, a daemon that
            // went away: stopped, or killed, as the connection was made.
            guard reason == String(cString: strerror(EAGAIN)) else {
                let detail = reason == Self.closedByDaemon ? "" : " (\(reason))"
                throw KeychainError(
                    .errSecIO,
                    "keychaind closed the connection before it greeted this process\(detail): it stopped or was "
                        + "killed (its log says why); try again, and it starts again when asked")
            }
            throw KeychainError(
                .errSecIO,
                "keychaind sent this process no greeting within \(Self.greetingTimeout) s; a keychaind older than "
                    + "this program sends none: stop it (keychainctl daemon stop) and try again"
            )
        }
        _ = try DaemonTransport.decode(body, naming: "greeting").get()
    }

    deinit { close(descriptor) }

    /// Sends one request body and returns the reply body. Both may hold secrets: the request
    /// is the caller's to wipe, the reply too.
    func exchange(_ body: [UInt8]) throws(Failure) -> [UInt8] {
        // Half a frame is never acted on, so a failure while sending leaves nothing done.
        try send(body: body)
        return try receiveBody()
    }

    /// Sends one frame's body (a prompt agent's event). It may hold a secret: the caller wipes it.
    func send(body: [UInt8]) throws(Failure) {
        var frame = WireFrame.header(body.count) + body
        defer { frame.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        try send(frame)
    }

    /// The next frame's body (a prompt agent's command), waiting as long as it takes.
    func receiveBody() throws(Failure) -> [UInt8] {
        try receive(try bodyLength())
    }

    /// The descriptor that follows a reply (``KeychainRequest/watchChanges``); nil when none
    /// came.
    func receiveDescriptor() -> Int32? {
        let received = kc_receive_descriptor(descriptor)
        return received >= 0 ? received : nil
    }

    /// True when a frame (or the end of the connection) is waiting to be read.
    var hasInput: Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// The length of the next frame's body, from its header.
    private func bodyLength() throws(Failure) -> Int {
        let length = WireFrame.bodyLength(try receive(WireFrame.headerSize))
        guard length <= WireFrame.maximumReply else { throw .noReply("a reply of \(length) bytes, over the limit") }
        return length
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .notSent(errno) }
            sent += count
        }
    }

    private func receive(_ count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let read = bytes.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress! + received, count - received, 0)
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                throw .noReply(read == 0 ? Self.closedByDaemon : String(cString: strerror(errno)))
            }
            received += read
        }
        return bytes
    }
}
