#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation
import NIOCore

/// Who is on the other end of a connection, as the kernel says: never taken from a request.
///
/// `SO_PEERCRED` gives the uid and pid recorded when the client connected; `SO_PEERPIDFD` gives
/// a pidfd for that very process. The executable is read from `/proc/PID/exe`, and the pidfd is
/// checked afterwards: had the client exited and its pid gone to another process in between,
/// the pidfd would be dead and the connection is refused (a recycled pid cannot take over an
/// identity). The pidfd stays open for the connection's life. `SO_PEERSEC` gives the peer's
/// security label (AppArmor's, which names a snap's confinement), where an LSM provides one.
struct PeerIdentity: Sendable {
    /// `struct ucred`, which Swift cannot import (it needs `_GNU_SOURCE`): same layout.
    private struct Credentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// Why a connection was refused.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    let pid: Int32
    let uid: UInt32
    /// The peer's pidfd; closed by ``close()``.
    let pidfd: Int32
    /// The executable's path when the client connected: the app's identity.
    let executable: String
    /// The login session (`setsid`) the client runs in: owner sessions are kept per session.
    let session: Int32
    /// The peer's security label (`SO_PEERSEC`, e.g. `snap.NAME.APP (enforce)`); nil without an
    /// LSM that labels sockets, or for a label over 256 bytes.
    let securityLabel: String?

    /// Linux's `SO_PEERPIDFD`.
    private static let peerPidfdOption: Int32 = 77
    /// Linux's `SO_PEERSEC`.
    private static let peerSecurityOption: Int32 = 31

    /// The identity behind `channel`, or a ``Refusal``.
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerIdentity> {
        guard let socket = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(Refusal(description: "not a socket"))
        }
        let level = SocketOptionLevel(SOL_SOCKET)
        let credentials: EventLoopFuture<Credentials> = socket.unsafeGetSocketOption(level: level, name: SocketOptionName(SO_PEERCRED))
        let pidfd: EventLoopFuture<Int32> = socket.unsafeGetSocketOption(level: level, name: SocketOptionName(peerPidfdOption))
        // 256 zeroed bytes the kernel fills with the label; a shorter label ends at the first zero.
        let label: EventLoopFuture<String?> = (socket.unsafeGetSocketOption(level: level, name: SocketOptionName(peerSecurityOption)) as EventLoopFuture<SIMD64<UInt32>>)
            .map { buffer -> String? in
                let bytes = withUnsafeBytes(of: buffer) { Array($0.prefix { $0 != 0 }) }
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            .recover { _ in nil }
        return credentials.and(pidfd).and(label).flatMapThrowing { pair, label in
            let (credentials, pidfd) = pair
            guard pidfd >= 0 else { throw Refusal(description: "the kernel gave no pidfd for the peer") }
            guard let executable = executable(of: credentials.pid), let session = session(of: credentials.pid), kc_pidfd_is_alive(pidfd) == 1 else {
                Glibc.close(pidfd)
                throw Refusal(description: "the peer (pid \(credentials.pid)) exited before its executable could be read")
            }
            return PeerIdentity(pid: credentials.pid, uid: credentials.uid, pidfd: pidfd, executable: executable, session: session, securityLabel: label)
        }
    }

    private static func executable(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The session id (field 6 of `/proc/PID/stat`).
    private static func session(of pid: Int32) -> Int32? {
        guard let fields = ProcessFiles.statFields(pid), fields.count > 3 else { return nil }
        return Int32(fields[3])
    }

    /// Closes the pidfd.
    func close() {
        Glibc.close(pidfd)
    }
}
