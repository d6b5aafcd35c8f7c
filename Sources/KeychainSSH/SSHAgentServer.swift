#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// The agent's Unix socket, served with SwiftNIO: each connection's messages are answered in
/// order, one at a time, off the event loop (an answer may wait for the owner's touch).
///
/// Only processes of this user are served, as OpenSSH's own agent does (`SO_PEERCRED`).
public enum SSHAgentServer {
    /// Serves the socket at `path` (created with mode 0600) until the process ends.
    public static func run(socket path: String, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream? = nil) throws -> Never {
        let group = MultiThreadedEventLoopGroup.singleton
        let channel = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                Client.of(channel).flatMapThrowing { client in
                    guard client.uid == getuid() else { throw SSHDecodingError() }
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(SSHAgentMessageDecoder()),
                        ConnectionHandler(connection: SSHAgentConnection(client: client.program, terminal: client.terminal, authentications: authentications, upstream: upstream)))
                }.flatMapError { _ in channel.close() }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .wait()
        chmod(path, 0o600)
        try channel.closeFuture.wait()
        exit(0)
    }

    /// The connecting process: its uid, its program's name for the prompt, and its terminal,
    /// where the prompt shows.
    private struct Client {
        var uid: uid_t
        var program: String
        var terminal: String?

        /// `struct ucred`, which Swift cannot import: the same layout.
        private struct Credentials {
            var pid: Int32 = 0
            var uid: UInt32 = 0
            var gid: UInt32 = 0
        }

        static func of(_ channel: any Channel) -> EventLoopFuture<Client> {
            guard let socket = channel as? any SocketOptionProvider else { return channel.eventLoop.makeFailedFuture(SSHDecodingError()) }
            let credentials: EventLoopFuture<Credentials> = socket.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            return credentials.map { credentials in
                let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(credentials.pid)/exe")) ?? "a program"
                return Client(uid: credentials.uid, program: "“\((executable as NSString).lastPathComponent)”", terminal: terminal(of: credentials.pid, uid: credentials.uid))
            }
        }

        /// The pseudo-terminal that is `pid`'s controlling terminal (`tty_nr` in
        /// `/proc/PID/stat`), when it is one and belongs to `uid`.
        private static func terminal(of pid: Int32, uid: UInt32) -> String? {
            guard let record = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let end = record.lastIndex(of: ")")
            else { return nil }
            // After the command's closing parenthesis: state, ppid, pgrp, session, tty_nr.
            let fields = record[record.index(after: end)...].split(separator: " ")
            guard fields.count > 4, let number = UInt32(fields[4]), number != 0 else { return nil }
            let major = (number >> 8) & 0xfff
            let minor = (number & 0xff) | ((number >> 12) & 0xfff00)
            // Unix 98 pseudo-terminals: majors 136 to 143.
            guard (136...143).contains(major) else { return nil }
            let path = "/dev/pts/\((major - 136) * 256 + minor)"
            var status = stat()
            // glibc's makedev, which Swift cannot import (a macro).
            let device = (UInt64(major & 0xfffff000) << 32) | (UInt64(major & 0xfff) << 8) | (UInt64(minor & 0xffffff00) << 12) | UInt64(minor & 0xff)
            guard stat(path, &status) == 0, status.st_uid == uid, status.st_rdev == device else { return nil }
            return path
        }
    }

    /// Answers each message on the connection's own queue and writes the answer back.
    private final class ConnectionHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = [UInt8]

        private let connection: SSHAgentConnection
        private let queue = DispatchQueue(label: "keychain-ssh-agent.connection")

        init(connection: SSHAgentConnection) {
            self.connection = connection
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let message = unwrapInboundIn(data)
            let channel = context.channel
            queue.async { [connection] in
                let answer = connection.answer(message)
                var buffer = channel.allocator.buffer(capacity: 4 + answer.count)
                buffer.writeInteger(UInt32(answer.count))
                buffer.writeBytes(answer)
                channel.writeAndFlush(buffer, promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
