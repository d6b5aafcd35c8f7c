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
}

/// Cuts the stream into frames (``WireFrame``), never buffering more than one frame's limit:
/// an announced length over the limit is refused before its bytes arrive. The bytes of each
/// frame are zeroed in the connection's buffer once copied out (a request can carry a secret).
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = InboundFrame

    let maximum: Int
    private var refused = false

    init(maximum: Int = WireFrame.maximumRequest) {
        self.maximum = maximum
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
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
        context.fireChannelRead(wrapInboundOut(.body(body)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 && !refused {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.truncated))
        }
        return .needMoreData
    }
}
