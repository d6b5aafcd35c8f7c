import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a connection, as the kernel says: never taken from a request.
///
/// `SO_PEERCRED` gives the uid and pid recorded when the client connected; `SO_PEERPIDFD` gives
/// a pidfd for that very process. The executable is read from `/proc/PID/exe`, and the pidfd is
/// checked afterwards: had the client exited and its pid gone to another process in between,
/// the pidfd would be dead and the connection is refused (a recycled pid cannot take over an
/// identity). The pidfd stays open for the connection's life. `SO_PEERSEC` gives the peer's
/// security label (AppArmor's, which names a snap's confinement), where an LSM provides one.
struct PeerIdentity: Sendable {
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
    /// Nil when its leader has exited.
    let session: LoginSession?
    /// The peer's security label (`SO_PEERSEC`, e.g. `snap.NAME.APP (enforce)`); nil without an
    /// LSM that labels sockets, or for a label over 256 bytes.
    let securityLabel: String?

    /// The identity behind the connected socket `descriptor`, or a ``Refusal``.
    static func of(_ descriptor: Int32) throws(Refusal) -> PeerIdentity {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0 else {
            throw Refusal(description: "the kernel gave no credentials for the peer")
        }
        let pidfd = kc_peer_pidfd(descriptor)
        guard pidfd >= 0 else { throw Refusal(description: "the kernel gave no pidfd for the peer") }
        guard let executable = ProcessFiles.executable(pid), let session = session(of: pid),
            kc_pidfd_is_alive(pidfd) == 1
        else {
            Glibc.close(pidfd)
            throw Refusal(description: "the peer (pid \(pid)) exited before its executable could be read")
        }
        return PeerIdentity(
            pid: pid, uid: uid, pidfd: pidfd, executable: executable, session: LoginSession.current(session),
            securityLabel: securityLabel(descriptor))
    }

    /// The identity of `process`, which a Secret Service bridge names for a D-Bus client
    /// (``KeychainRequest/actForProcess(_:)``), or a ``Refusal``: the process must still be the
    /// one that started at its start time, and run as `uid`.
    ///
    /// A pidfd is opened for the pid first, and the start time read after: once they agree, the
    /// pidfd is that very process's, and everything read of `/proc/PID` before the pidfd is
    /// found alive again belongs to it. Its label is AppArmor's for the process
    /// (`/proc/PID/attr/current`, what `SO_PEERSEC` gives for a socket).
    static func of(_ process: ProcessReference, uid: UInt32) throws(Refusal) -> PeerIdentity {
        let pid = process.pid
        guard pid > 0 else { throw Refusal(description: "pid \(pid) names no process") }
        let pidfd = kc_pidfd_open(pid)
        guard pidfd >= 0 else { throw Refusal(description: "pid \(pid) is not running") }
        // Field 22, starttime, is at index 19; field 6, the session, at index 3.
        guard let stat = ProcessFiles.read(pid, "stat"),
            ProcessFiles.statNumber(19, of: stat).flatMap({ UInt64(exactly: $0) }) == process.startTime
        else {
            Glibc.close(pidfd)
            throw Refusal(description: "pid \(pid) is another process than the one named (it started at another time)")
        }
        guard effectiveUser(of: pid) == uid else {
            Glibc.close(pidfd)
            throw Refusal(description: "pid \(pid) does not run as uid \(uid)")
        }
        guard let executable = ProcessFiles.executable(pid),
            let session = ProcessFiles.statNumber(3, of: stat).flatMap({ Int32(exactly: $0) }),
            kc_pidfd_is_alive(pidfd) == 1
        else {
            Glibc.close(pidfd)
            throw Refusal(description: "pid \(pid) exited before its executable could be read")
        }
        let label = ProcessFiles.read(pid, "attr/current").flatMap { bytes -> String? in
            let text = bytes.prefix { $0 != 0 && $0 != UInt8(ascii: "\n") }
            return text.isEmpty || text.count > 256 ? nil : String(decoding: text, as: UTF8.self)
        }
        return PeerIdentity(
            pid: pid, uid: uid, pidfd: pidfd, executable: executable, session: LoginSession.current(session),
            securityLabel: label)
    }

    /// The effective uid of `pid` (the second figure of `Uid:` in `/proc/PID/status`).
    private static func effectiveUser(of pid: Int32) -> UInt32? {
        guard let status = ProcessFiles.read(pid, "status") else { return nil }
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Uid:".utf8)) {
            let figures = line.dropFirst(4).split(whereSeparator: { $0 == UInt8(ascii: "\t") || $0 == 32 })
            return figures.count > 1 ? UInt32(String(decoding: figures[1], as: UTF8.self)) : nil
        }
        return nil
    }

    /// The peer's label: up to 256 bytes, a shorter one ending at its first zero.
    private static func securityLabel(_ descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 257)
        guard kc_peer_security_label(descriptor, &buffer, 256) > 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The session id (field 6 of `/proc/PID/stat`).
    private static func session(of pid: Int32) -> Int32? {
        ProcessFiles.statNumber(3, ofProcess: pid).flatMap { Int32(exactly: $0) }
    }

    /// Closes the pidfd.
    func close() {
        Glibc.close(pidfd)
    }
}
