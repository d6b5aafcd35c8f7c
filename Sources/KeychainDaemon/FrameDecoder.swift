#if canImport(Glibc)
import Glibc
#endif
import KeychainProtocol
import NIOCore

/// One message from a client, cut from the byte stream by its length prefix.
enum InboundFrame: Sendable {
    /// A whole message body.
    case body([UInt8])
    /// A length prefix over the limit: the body is not read, and nothing more from this
    /// connection is.
    case oversized(Int)
    /// The client closed the connection in the middle of a message.
    case truncated

    /// Zeroes a body's bytes (a request can carry a secret) and leaves no body behind. The
    /// enum's own reference is dropped first, so the wipe reaches the storage the frame held.
    mutating func wipe() {
        guard case .body(var bytes) = self else { return }
        self = .truncated
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }
}

/// Cuts the stream into frames (``WireFrame``), never buffering more than one frame's limit:
/// an announced length over the limit is refused before its bytes arrive. The bytes of each
/// frame are zeroed in the connection's buffer once copied out (a request can carry a secret).
///
/// A message begun must be finished within ``stallTimeout``, or the connection is closed: a
/// client that sends half a message and stops holds nothing for long. A connection between
/// messages may stay open as long as its app likes (its authentication contexts live with it).
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = InboundFrame

    /// Seconds a client has to finish a message it began: a real client writes a message at
    /// once, and the largest (1 MiB) crosses a Unix socket in milliseconds.
    static let stallTimeout: TimeAmount = .seconds(10)

    let maximum: Int
    private var refused = false
    /// Closes the connection unless the message under way completes first.
    private var stall: Scheduled<Void>?

    init(maximum: Int = WireFrame.maximumRequest) {
        self.maximum = maximum
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let state = try cut(context: context, buffer: &buffer)
        if buffer.readableBytes == 0 || refused {
            stall?.cancel()
            stall = nil
        } else if stall == nil {
            let channel = context.channel
            stall = context.eventLoop.scheduleTask(in: Self.stallTimeout) { channel.close(promise: nil) }
        }
        return state
    }

    private mutating func cut(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !refused else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard Int(length) <= maximum else {
            refused = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.oversized(Int(length))))
            return .needMoreData
        }
        guard buffer.readableBytes >= WireFrame.headerSize + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: WireFrame.headerSize)
        let body = buffer.withUnsafeMutableReadableBytes { bytes -> [UInt8] in
            let frame = Array(bytes.prefix(Int(length)))
            if let base = bytes.baseAddress { _ = memset(base, 0, Int(length)) }
            return frame
        }
        buffer.moveReaderIndex(forwardBy: Int(length))
        // The next message has its own time.
        stall?.cancel()
        stall = nil
        context.fireChannelRead(wrapInboundOut(.body(body)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        stall?.cancel()
        stall = nil
        while try cut(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 && !refused {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.truncated))
        }
        return .needMoreData
    }
}
