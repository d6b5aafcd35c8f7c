import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl daemon start|stop|status`: the daemon seen from outside.
public enum DaemonControl {
    /// The running daemon's status; nil when none runs and `starting` is false.
    ///
    /// - Parameter daemonArguments: `keychaind`'s arguments, should it be started.
    /// - Throws: `errSecIO` when a daemon cannot be started or does not answer.
    public static func status(
        starting: Bool, daemonArguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeychainError) -> DaemonStatus? {
        var transport = DaemonTransport(environment: environment, daemonArguments: daemonArguments)
        if !starting {
            let socket = KeychainPaths.runtimeDirectory(environment: environment).appendingPathComponent(
                KeychainPaths.socketName
            ).path
            guard let running = try DaemonConnection(path: socket) else { return nil }
            transport = DaemonTransport(connection: running, environment: environment)
        }
        guard case .daemon(let status) = try transport.perform(.daemonStatus) else {
            throw KeychainError(.errSecInternalComponent, "keychaind answered a status request with something else")
        }
        return status
    }

    /// The status of the system daemon listening at `socket` (checked as ``SystemDaemon`` does).
    ///
    /// - Throws: `errSecNotAvailable` when it does not answer; `errSecInvalidKeychain` when the
    ///   socket or its process belong to someone else.
    public static func systemStatus(socket: String = KeychainPaths.systemSocket) throws(KeychainError) -> DaemonStatus {
        guard case .daemon(let status) = try DaemonTransport(systemSocket: socket).perform(.daemonStatus) else {
            throw KeychainError(.errSecInternalComponent, "keychaind answered a status request with something else")
        }
        return status
    }

    /// Stops the running daemon with SIGTERM (it finishes the requests under way) and waits up
    /// to 10 s for it to go: until its lock on `daemon.lock` is free, which happens when its
    /// process has ended. Returns the pid it stopped, or nil when none ran.
    ///
    /// - Throws: `errSecIO` when it does not stop in time.
    public static func stop(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeychainError) -> Int32? {
        // The daemon's pid from the kernel, not from its status: a daemon whose keychain does
        // not open (an older copy refused, a TPM missing) answers no status, and is stopped too.
        let socket = KeychainPaths.runtimeDirectory(environment: environment).appendingPathComponent(
            KeychainPaths.socketName
        ).path
        guard let running = try DaemonConnection(path: socket) else { return nil }
        let lockPath = KeychainPaths.runtimeDirectory(environment: environment).appendingPathComponent(
            KeychainPaths.daemonLockName
        ).path
        let lock = open(lockPath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard lock >= 0 else { throw KeychainError(.errSecIO, "cannot open \(lockPath)") }
        defer { close(lock) }
        kill(running.daemonPID, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if flock(lock, LOCK_EX | LOCK_NB) == 0 {
                flock(lock, LOCK_UN)
                return running.daemonPID
            }
            usleep(20_000)
        }
        throw KeychainError(.errSecIO, "keychaind (pid \(running.daemonPID)) did not stop within 10 s")
    }
}
