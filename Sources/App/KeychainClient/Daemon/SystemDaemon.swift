import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon (`keychaind --system`) as a client finds and trusts it.
///
/// Clients look at one fixed path, ``KeychainPaths/systemSocket``, before anything else; no
/// environment variable moves it (an app started with a planted `XDG_RUNTIME_DIR` still reaches
/// the system daemon). Before a byte is sent, the socket file must be a socket owned by the
/// ``KeychainPaths/systemUserName`` user, in a directory of that user or root that nobody else
/// can write, and the process listening must run as that user (`SO_PEERCRED`): a socket planted
/// by anyone else, or a process of another user behind a right-looking file, is refused with
/// `errSecInvalidKeychain`.
///
/// When the socket exists but nobody listens (the daemon is stopped and systemd does not hold
/// the socket), the client gets `errSecNotAvailable`; it never falls back to a per-user keychain,
/// which would put the user's secrets where their own programs can read the files.
public enum SystemDaemon {
    /// True when a system daemon is installed here: something is at its socket's path.
    public static var isInstalled: Bool {
        var info = stat()
        return lstat(KeychainPaths.systemSocket, &info) == 0
    }

    /// The uid of the ``KeychainPaths/systemUserName`` user.
    ///
    /// - Throws: `errSecInvalidKeychain` when there is no such user (so no socket can be trusted).
    public static func daemonUID() throws(KeychainError) -> uid_t {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(KeychainPaths.systemUserName, &entry, &buffer, buffer.count, &result) == 0, result != nil
        else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "there is no \(KeychainPaths.systemUserName) user, so no system keychain daemon can be trusted; "
                    + "install it with `keychainctl daemon install --system` (as root)"
            )
        }
        return entry.pw_uid
    }

    /// A connection to the system daemon listening on `socket`, checked as described above.
    ///
    /// - Throws: `errSecInvalidKeychain` when the socket, its directory or the listening process
    ///   belongs to someone else; `errSecNotAvailable` when no daemon listens.
    static func connect(_ socket: String) throws(KeychainError) -> DaemonConnection {
        let daemon = try daemonUID()
        try checkOwner(of: socket, isSocket: true, daemon)
        try checkOwner(of: URL(fileURLWithPath: socket).deletingLastPathComponent().path, isSocket: false, daemon)
        guard let connection = try DaemonConnection(path: socket, listener: daemon) else {
            throw KeychainError(
                .errSecNotAvailable,
                "the system keychain daemon does not answer on \(socket); start it (systemctl start keychaind.socket)")
        }
        return connection
    }

    private static func checkOwner(of path: String, isSocket: Bool, _ daemon: uid_t) throws(KeychainError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw KeychainError(
                .errSecNotAvailable, "no system keychain daemon socket at \(path): \(String(cString: strerror(errno)))")
        }
        let kind = info.st_mode & S_IFMT
        if isSocket {
            guard kind == S_IFSOCK, info.st_uid == daemon else {
                throw KeychainError(
                    .errSecInvalidKeychain,
                    "\(path) is not a socket of the \(KeychainPaths.systemUserName) user (owner uid "
                        + "\(info.st_uid)); not trusting it"
                )
            }
        } else {
            guard kind == S_IFDIR, info.st_uid == daemon || info.st_uid == 0, info.st_mode & (S_IWGRP | S_IWOTH) == 0
            else {
                throw KeychainError(
                    .errSecInvalidKeychain,
                    "\(path) could be changed by someone other than root and the \(KeychainPaths.systemUserName) "
                        + "user (owner uid \(info.st_uid), mode \(String(info.st_mode & 0o7777, radix: 8))); not "
                        + "trusting the socket inside"
                )
            }
        }
    }
}
