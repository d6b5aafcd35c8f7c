import CKeychainSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a server's connections come from, and the loop that takes them: its listening Unix
/// socket, or, for a system daemon's worker, a channel on which the front that accepted them
/// hands them over (`SCM_RIGHTS`, ``kc_socketpair_seqpacket``), each untouched, with the
/// credentials option its listening socket gave it. Taking never waits on a client: each
/// connection is handed on at once (to a thread of its own that identifies and serves it).
public final class ConnectionListener: Sendable {
    /// The socket could not be set up.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let descriptor: Int32
    /// True for a channel of handed-over connections; false for a listening socket.
    private let handedOver: Bool
    /// Written once to stop the accepting thread.
    private let wake: (read: Int32, write: Int32)

    /// Listens on a socket bound at `path` (a socket file left by a dead daemon is replaced:
    /// the caller holds the daemon lock), readable and writable by `permissions`.
    public convenience init(path: String, permissions: mode_t) throws(Failure) {
        let descriptor = kc_listen_unix(path, 128)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, permissions)
        try self.init(descriptor: descriptor)
    }

    /// Accepts on `descriptor`, a listening socket already bound (systemd's). The kernel is
    /// asked for each writer's credentials on the listening socket itself, which each accepted
    /// socket inherits as it is accepted: a client that writes at once (as ssh does to an agent)
    /// writes with them, before its connection's thread could ask.
    public convenience init(descriptor: Int32) throws(Failure) {
        guard kc_pass_credentials(descriptor) == 0 else {
            throw Failure(description: "cannot ask for the writers' credentials: \(String(cString: strerror(errno)))")
        }
        try self.init(descriptor, handedOver: false)
    }

    /// Takes the connections handed over on `channel`, which this object now owns, until the
    /// other end closes it or ``stop()``.
    public convenience init(handedOverOn channel: Int32) throws(Failure) {
        try self.init(channel, handedOver: true)
    }

    private init(_ descriptor: Int32, handedOver: Bool) throws(Failure) {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else {
            throw Failure(description: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        self.handedOver = handedOver
        wake = (ends[0], ends[1])
    }

    deinit {
        close(descriptor)
        close(wake.read)
        close(wake.write)
    }

    /// Accepts until ``stop()`` (or, for handed-over connections, until the channel closes), on a
    /// thread of its own, handing each connected socket to `accepted` there (which must not
    /// wait); returns once the thread has ended.
    public func acceptUntilStopped(_ accepted: @escaping @Sendable (Int32) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                accept(accepted)
                done.resume()
            }
            thread.name = "keychaind accept"
            thread.start()
        }
    }

    /// Ends the accepting: no connection is taken after this.
    public func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Accepts on the calling thread until ``stop()``, handing each connected socket to
    /// `accepted` (which must not wait).
    public func accept(_ accepted: @Sendable (Int32) -> Void) {
        var entries = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, entries[1].revents == 0 else { return }
            let connection = handedOver ? kc_receive_descriptor(descriptor) : kc_accept(descriptor)
            if connection >= 0 {
                accepted(connection)
            } else if errno == EMFILE || errno == ENFILE {
                // Out of descriptors: the table's caps keep this rare; wait for one to close.
                usleep(10_000)
            } else if handedOver && (connection == -2 || (errno != EINTR && errno != EBADMSG)) {
                // The front closed the channel (it ended): no connection will come.
                return
            }
        }
    }
}
