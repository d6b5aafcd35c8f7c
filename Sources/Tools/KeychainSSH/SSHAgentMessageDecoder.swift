import NIOCore

/// Cuts an agent connection's stream into messages by their 32-bit length; a message over
/// 256 KiB (OpenSSH's agent's limit) or of no bytes closes the connection.
struct SSHAgentMessageDecoder: ByteToMessageDecoder {
    typealias InboundOut = [UInt8]

    /// The largest message OpenSSH's agent takes.
    static let maximumMessage = 256 * 1024

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard length > 0, Int(length) <= Self.maximumMessage else { throw SSHDecodingError() }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        context.fireChannelRead(wrapInboundOut(buffer.readBytes(length: Int(length)) ?? []))
        return .continue
    }
}
