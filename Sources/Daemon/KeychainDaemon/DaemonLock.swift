import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The lock a daemon holds for its whole life on `daemon.lock` in its runtime directory: at
/// most one daemon serves a directory, so a daemon holding it may remove a socket file it finds
/// there (a daemon that died left it) before binding its own.
final class DaemonLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock, without waiting.
    ///
    /// - Throws: ``KeychainDaemon/AlreadyRunning`` when another daemon holds it; `errSecIO` when the file
    ///   cannot be opened.
    init(in directory: URL) throws {
        let path = directory.appendingPathComponent(KeychainPaths.daemonLockName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KeychainError(.errSecIO, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw KeychainDaemon.AlreadyRunning()
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
