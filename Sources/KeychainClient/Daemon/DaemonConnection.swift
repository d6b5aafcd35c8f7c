#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation
import KeychainProtocol

/// One connection to `keychaind`: frames out, frames in (``WireFrame``), blocking.
///
/// Connecting checks, through the kernel, that the process listening runs as the expected user
/// (this user for the per-user daemon, the keychaind user for the system one): a socket planted
/// by someone else is refused.
final class DaemonConnection {
    private let descriptor: Int32

    /// The daemon stopped answering on this connection.
    enum Failure: Error {
        /// Nothing was sent: the request can be sent again on a new connection.
        case notSent(Int32)
        /// The request went out and no reply came: it may or may not have been carried out.
        case noReply(String)
    }

    /// Connects to the socket at `path`; nil when no daemon listens there.
    ///
    /// - Parameter listener: the uid the listening process must run as.
    init?(path: String, listener: uid_t = getuid()) throws(KeychainError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KeychainError(.errSecParam, "the keychain daemon's socket path is too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw KeychainError(.errSecIO, "cannot create a socket: \(String(cString: strerror(errno)))") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0, uid == listener else {
            close(descriptor)
            throw KeychainError(.errSecInvalidKeychain, "the process listening on \(path) runs as uid \(uid), not \(listener); not trusting it")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends one request body and returns the reply body. Both may hold secrets: the request
    /// is the caller's to wipe, the reply too.
    func exchange(_ body: [UInt8]) throws(Failure) -> [UInt8] {
        // Half a frame is never acted on, so a failure while sending leaves nothing done.
        var frame = WireFrame.header(body.count) + body
        defer { frame.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        try send(frame)
        let header = try receive(WireFrame.headerSize)
        let length = WireFrame.bodyLength(header)
        guard length <= WireFrame.maximumReply else { throw .noReply("a reply of \(length) bytes, over the limit") }
        return try receive(length)
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .notSent(errno) }
            sent += count
        }
    }

    private func receive(_ count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let read = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, count - received, 0) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { throw .noReply(read == 0 ? "the daemon closed the connection" : String(cString: strerror(errno))) }
            received += read
        }
        return bytes
    }
}
