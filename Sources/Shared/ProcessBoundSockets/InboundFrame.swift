#if canImport(Glibc)
import Glibc
#endif

/// One message from a client, cut from the byte stream by its 32-bit big-endian length prefix
/// (keychaind's ``WireFrame`` and OpenSSH's agent protocol frame messages alike).
public enum InboundFrame: Sendable {
    /// A whole message body.
    case body([UInt8])
    /// A length prefix over the limit: the body is not read, and nothing more from this
    /// connection is.
    case oversized(Int)
    /// The client closed the connection in the middle of a message.
    case truncated

    /// Zeroes a body's bytes (a request can carry a secret) and leaves no body behind. The
    /// enum's own reference is dropped first, so the wipe reaches the storage the frame held.
    public mutating func wipe() {
        guard case .body(var bytes) = self else { return }
        self = .truncated
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }
}
