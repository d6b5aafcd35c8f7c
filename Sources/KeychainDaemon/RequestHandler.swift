#if canImport(Glibc)
import Glibc
#endif
import KeychainProtocol
import NIOCore
import NIOPosix

/// One connection's requests, answered in order. A request that may wait (a write and its
/// fsync, a passcode check, a wait for a touch) is answered on the daemon's thread pool, which it
/// blocks instead of the event loop, and its reply is written from the event loop when it comes
/// back. A lookup (``Route/runsAtOnce``) is answered on the event loop itself: crossing to
/// the pool and back costs more than the lookup (on this 2-core VM, each crossing's wake-up costs
/// tens of microseconds of the processor).
///
/// The handler is in place from the connection's first byte and holds what comes until
/// ``start(_:)`` says who the client is. While a request is answered, and before the start, the
/// connection is not read further (the pending read is held), so a client that sends without
/// reading its replies buffers at most one read's frames here.
/// The connection closes after a reply that ends it (a malformed request), once the client has
/// closed its side and every request it sent is answered, or, when the daemon stops
/// (``Stop``), after the request under way is answered.
final class RequestHandler: ChannelDuplexHandler {
    typealias InboundIn = InboundFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The daemon stops: the request under way is answered, then the connection closes.
    struct Stop {}

    /// A reply's bytes, and whether the connection stays open after it.
    typealias Reply = (reply: [UInt8], keepOpen: Bool)

    /// The work that answers one frame, and whether it runs on the event loop (a request that
    /// never waits) or on the pool.
    struct Route: Sendable {
        var runsAtOnce: Bool
        var answer: @Sendable () -> Reply

        /// A frame refused with `error`, and the connection closed.
        static func refusal(_ error: KeychainError) -> Route {
            Route(runsAtOnce: true) { (ReplyParser.encode(.failure(error)), false) }
        }
    }

    /// Reads one frame (on the event loop): its route. The handler wipes the frame afterwards.
    typealias Answer = @Sendable (InboundFrame) -> Route

    private var answer: Answer?
    private let pool: NIOThreadPool
    private var waiting = CircularBuffer<InboundFrame>()
    /// A request is on the pool.
    private var answering = false
    /// Replies handed to the socket and not yet written: the connection closes after them.
    private var unwritten = 0
    private var heldRead = false
    private var inputClosed = false
    private var stopping = false

    init(pool: NIOThreadPool) {
        self.pool = pool
    }

    /// Starts answering, with `answer` (the client is known).
    func start(_ answer: @escaping Answer, context: ChannelHandlerContext) {
        self.answer = answer
        answerWaiting(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        waiting.append(unwrapInboundIn(data))
        answerWaiting(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            inputClosed = true
            closeIfDone(context: context)
        case is Stop:
            stopping = true
            discardWaiting()
            closeIfDone(context: context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func read(context: ChannelHandlerContext) {
        if answer == nil || answering || !waiting.isEmpty {
            heldRead = true
        } else {
            context.read()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Answers the frames waiting, in order, until one goes to the pool; with none left, closes
    /// the connection if it is done, or reads on.
    private func answerWaiting(context: ChannelHandlerContext) {
        while let answer, !answering, !stopping, var frame = waiting.popFirst() {
            let route = answer(frame)
            frame.wipe()
            if route.runsAtOnce {
                var reply: Reply? = route.answer()
                deliver(&reply, context: context)
                continue
            }
            answering = true
            // The reply is handed over in a box, never through a future (which would keep a
            // copy of it that the wipe cannot reach).
            let loop = context.eventLoop
            let handler = NIOLoopBound((self, context), eventLoop: loop)
            pool.submit { state in
                let box = NIOLoopBoundBox.makeBoxSendingValue(state == .active ? route.answer() : nil, as: Reply?.self, eventLoop: loop)
                loop.execute {
                    let (handler, context) = handler.value
                    var reply: Reply?
                    box.withValue { swap(&reply, &$0) }
                    handler.answering = false
                    handler.deliver(&reply, context: context)
                    handler.answerWaiting(context: context)
                }
            }
            return
        }
        guard !answering, !closeIfDone(context: context), heldRead, !stopping, waiting.isEmpty else { return }
        heldRead = false
        context.read()
    }

    /// Writes `reply`, wiping it; nil when the pool stopped (the daemon is shutting down).
    private func deliver(_ reply: inout Reply?, context: ChannelHandlerContext) {
        guard var answered = reply else {
            var failure = ReplyParser.encode(.failure(KeychainError(.errSecInternalComponent, "the daemon is shutting down")))
            write(&failure, context: context)
            stopping = true
            return
        }
        reply = nil
        write(&answered.reply, context: context)
        if !answered.keepOpen {
            stopping = true
            discardWaiting()
        }
    }

    /// Drops the frames not yet answered, wiped.
    private func discardWaiting() {
        while var frame = waiting.popFirst() { frame.wipe() }
    }

    /// Writes one reply. A reply may carry a secret: the encoded copy is wiped once it is in the
    /// buffer, and the buffer once the socket has it. The wipe waits for the write to complete,
    /// when NIO has normally released its reference, so it reaches the storage (were NIO still
    /// holding it, the wipe would touch a copy and the storage would be freed unwiped).
    private func write(_ reply: inout [UInt8], context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: WireFrame.headerSize + reply.count)
        buffer.writeBytes(WireFrame.header(reply.count))
        buffer.writeBytes(reply)
        reply.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: written)
        unwritten += 1
        written.futureResult.assumeIsolated().whenComplete { _ in
            buffer.withUnsafeMutableReadableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
            self.unwritten -= 1
            self.closeIfDone(context: context)
        }
    }

    /// Closes the connection when nothing is left to answer or to write and nothing more will
    /// come: true when it did.
    @discardableResult
    private func closeIfDone(context: ChannelHandlerContext) -> Bool {
        guard !answering, unwritten == 0, stopping || (inputClosed && waiting.isEmpty) else { return false }
        // Before the start, a request that came is still answered (a truncated one is told why).
        guard answer != nil || waiting.isEmpty else { return false }
        context.close(promise: nil)
        return true
    }
}
