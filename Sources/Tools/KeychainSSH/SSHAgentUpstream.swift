import Foundation
import NIOCore
import NIOPosix

/// Another agent this one forwards to (`keychainctl ssh-agent --proxy SOCKET`): its keys are
/// listed after the Enclave's, and a signature with one of them is its to make.
public final class SSHAgentUpstream: Sendable {
    private let path: String
    /// How long the other agent has to answer (it may be asking its owner too).
    private static let timeout: TimeAmount = .seconds(60)

    /// The agent listening at `path`.
    public init(socket path: String) {
        self.path = path
    }

    /// Sends one message and returns the other agent's answer; nil when it cannot be reached
    /// or does not answer in time. Called off the event loop: it waits.
    func exchange(_ message: [UInt8]) -> [UInt8]? {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let answer = eventLoop.makePromise(of: [UInt8].self)
        let timeout = eventLoop.scheduleTask(in: Self.timeout) { answer.fail(SSHDecodingError()) }
        defer { timeout.cancel() }
        guard
            let channel = try? ClientBootstrap(group: eventLoop)
                .channelInitializer({ channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(SSHAgentMessageDecoder()), AnswerHandler(answer: answer))
                    }
                })
                .connect(unixDomainSocketPath: path).wait()
        else { return nil }
        defer { channel.close(promise: nil) }
        var buffer = channel.allocator.buffer(capacity: 4 + message.count)
        buffer.writeInteger(UInt32(message.count))
        buffer.writeBytes(message)
        channel.writeAndFlush(buffer, promise: nil)
        return try? answer.futureResult.wait()
    }

    /// Takes the first message that comes back.
    private final class AnswerHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = [UInt8]
        private let answer: EventLoopPromise<[UInt8]>

        init(answer: EventLoopPromise<[UInt8]>) {
            self.answer = answer
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            answer.succeed(unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) {
            answer.fail(SSHDecodingError())
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answer.fail(error)
        }
    }
}
