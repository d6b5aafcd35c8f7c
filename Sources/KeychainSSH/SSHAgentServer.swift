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
                guard let socket = channel as? any SocketOptionProvider else { return channel.close() }
                let credentials: EventLoopFuture<Credentials> = socket.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
                return credentials.flatMapThrowing { credentials in
                    guard credentials.uid == getuid() else { throw SSHDecodingError() }
                    let client = SSHAgentClient.of(pid: credentials.pid, uid: credentials.uid)
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(SSHAgentMessageDecoder()),
                        ConnectionHandler(connection: SSHAgentConnection(client: client, authentications: authentications, upstream: upstream)))
                }.flatMapError { _ in channel.close() }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .wait()
        chmod(path, 0o600)
        try channel.closeFuture.wait()
        exit(0)
    }

    /// `struct ucred`, which Swift cannot import: the same layout.
    private struct Credentials {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
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
