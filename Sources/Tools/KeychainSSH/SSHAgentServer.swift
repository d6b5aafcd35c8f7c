import CKeychainSupport
import Foundation
import Keychain
import ProcessBoundSockets

#if canImport(Glibc)
import Glibc
#endif

/// The agent's Unix socket: each connection on a thread of its own, its messages answered in
/// order (an answer may wait for the owner's touch).
///
/// Only processes of this user are served, as OpenSSH's own agent does (`SO_PEERCRED`), and
/// each message must come from the process that connected, as keychaind's requests must
/// (``ClientSocket``): the kernel names the writer of every byte, so a message written on a
/// socket another process inherited, was handed or took (`pidfd_getfd`) gets
/// `SSH_AGENT_FAILURE` and the connection closes, and so does one from a client that has exited
/// (its pid could be another's). What it cannot tell, as the agent protocol has no greeting: a
/// program that writes its request and then executes `ssh` before the agent looks is shown as
/// `ssh`; a key with an access control still signs only what the sheet names
/// (``SSHSignedData``).
public enum SSHAgentServer {
    /// Serves the socket at `path` (created with mode 0600) until the process ends.
    public static func run(
        socket path: String, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream? = nil
    ) throws -> Never {
        let listener: ConnectionListener
        do {
            listener = try ConnectionListener(path: path, permissions: 0o600)
        } catch {
            throw KeychainError(.errSecIO, error.description)
        }
        listener.accept { descriptor in
            let thread = Thread {
                serve(
                    ClientSocket(descriptor, maximumFrame: maximumMessage), authentications: authentications,
                    upstream: upstream)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        exit(0)
    }

    /// The largest message OpenSSH's agent takes.
    static let maximumMessage = 256 * 1024

    /// Serves one connection until it closes or breaks a rule, then closes it.
    private static func serve(
        _ socket: ClientSocket, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream?
    ) {
        defer { socket.close() }
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(socket.descriptor, &pid, &uid) == 0, uid == getuid() else { return }
        let pidfd = kc_peer_pidfd(socket.descriptor)
        guard pidfd >= 0 else { return }
        defer { close(pidfd) }
        let client = SSHAgentClient.of(pid: pid, uid: uid)
        guard kc_pidfd_is_alive(pidfd) == 1 else { return }
        let descriptor = socket.descriptor
        let connection = SSHAgentConnection(
            client: client, authentications: authentications, upstream: upstream,
            clientHasGone: { kc_pidfd_is_alive(pidfd) != 1 || hungUp(descriptor) })
        while true {
            switch socket.receive(from: pid, idleSeconds: nil) {
            case .frame(let frame):
                // Agent messages hold no secret (keys never leave the Enclave): not wiped.
                guard case .body(let message) = frame, !message.isEmpty, kc_pidfd_is_alive(pidfd) == 1 else {
                    var failure = [SSHAgentConnection.Message.failure.rawValue]
                    socket.send(&failure)
                    return
                }
                var answer = [UInt8](connection.answer(message))
                guard socket.send(&answer) else { return }
            case .foreignWriter(let writer):
                StandardErrorLine.write(
                    "keychainctl ssh-agent: a message written by pid \(writer) on the connection of pid \(pid) "
                        + "(\(client.executable)) was refused"
                )
                var failure = [SSHAgentConnection.Message.failure.rawValue]
                socket.send(&failure)
                return
            case .closed, .timedOut, .failed:
                return
            }
        }
    }
}

/// Whether the peer of `descriptor` closed its end (or its end broke).
private func hungUp(_ descriptor: Int32) -> Bool {
    // POLLRDHUP (Linux's, which Glibc shows only under _GNU_SOURCE): the peer shut its end.
    let readHangUp: Int16 = 0x2000
    var entry = pollfd(fd: descriptor, events: readHangUp, revents: 0)
    return poll(&entry, 1, 0) == 1 && entry.revents & (readHangUp | Int16(POLLHUP | POLLERR)) != 0
}

/// One line on standard error, written whole.
private enum StandardErrorLine {
    static func write(_ text: String) {
        var line = Array((text + "\n").utf8)
        _ = Glibc.write(STDERR_FILENO, &line, line.count)
    }
}
