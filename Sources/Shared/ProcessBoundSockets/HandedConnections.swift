import CKeychainSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The connections another process accepted and handed over (`SCM_RIGHTS` on a channel of
/// ``kc_socketpair_seqpacket``): how a system daemon's worker receives its user's connections
/// from the front that accepted them. Each arrives as the front took it, untouched, with the
/// credentials option the listening socket gave it.
public final class HandedConnections: Sendable {
    private let channel: Int32
    /// Written once to stop the receiving thread.
    private let wake: (read: Int32, write: Int32)

    /// Receives on `channel`, which this object now owns.
    public init(channel: Int32) throws(ConnectionListener.Failure) {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else {
            throw ConnectionListener.Failure(description: "cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        self.channel = channel
        wake = (ends[0], ends[1])
    }

    deinit {
        close(channel)
        close(wake.read)
        close(wake.write)
    }

    /// Receives until ``stop()`` or until the front closes the channel, on a thread of its own,
    /// handing each connection to `received` there (which must not wait); returns once the
    /// thread has ended.
    public func receiveUntilStopped(_ received: @escaping @Sendable (Int32) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                receive(received)
                done.resume()
            }
            thread.name = "keychaind handed connections"
            thread.start()
        }
    }

    /// Ends the receiving: no connection is taken after this.
    public func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private func receive(_ received: @Sendable (Int32) -> Void) {
        var entries = [
            pollfd(fd: channel, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&entries, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, entries[1].revents == 0 else { return }
            let connection = kc_receive_descriptor(channel)
            if connection >= 0 {
                received(connection)
            } else if connection == -2 || (errno != EINTR && errno != EBADMSG && errno != EAGAIN) {
                return
            }
        }
    }
}
