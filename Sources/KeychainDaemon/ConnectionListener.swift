#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation
import KeychainProtocol

/// The daemon's listening socket and the thread that accepts on it. Accepting never waits on a
/// client: each connection is handed on at once (``ConnectionTable`` admits it, and its own
/// thread identifies and serves it).
final class ConnectionListener: Sendable {
    private let descriptor: Int32
    /// Written once to stop the accepting thread.
    private let wake: (read: Int32, write: Int32)

    /// Listens on a socket bound at `path` (a socket file left by a dead daemon is replaced:
    /// the caller holds the daemon lock), readable and writable by `permissions`.
    convenience init(path: String, permissions: mode_t) throws(KeychainError) {
        let descriptor = kc_listen_unix(path, 128)
        guard descriptor >= 0 else {
            throw KeychainError(.errSecIO, "cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, permissions)
        try self.init(descriptor: descriptor)
    }

    /// Accepts on `descriptor`, a listening socket already bound (systemd's).
    init(descriptor: Int32) throws(KeychainError) {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else { throw KeychainError(.errSecIO, "cannot create a pipe: \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        wake = (ends[0], ends[1])
    }

    deinit {
        close(descriptor)
        close(wake.read)
        close(wake.write)
    }

    /// Accepts until ``stop()``, on a thread of its own, handing each connected socket to
    /// `accepted` there (which must not wait); returns once the thread has ended.
    func acceptUntilStopped(_ accepted: @escaping @Sendable (Int32) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                acceptLoop(accepted)
                done.resume()
            }
            thread.name = "keychaind accept"
            thread.start()
        }
    }

    /// Ends the accepting: no connection is taken after this.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private func acceptLoop(_ accepted: @Sendable (Int32) -> Void) {
        var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, entries[1].revents == 0 else { return }
            let connection = kc_accept(descriptor)
            if connection >= 0 {
                accepted(connection)
            } else if errno == EMFILE || errno == ENFILE {
                // Out of descriptors: the table's caps keep this rare; wait for one to close.
                usleep(10_000)
            }
        }
    }
}
