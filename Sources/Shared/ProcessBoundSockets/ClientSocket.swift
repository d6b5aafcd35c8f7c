import CKeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// One client's connected socket as a server reads and writes it (keychaind, the ssh-agent),
/// blocking, on the connection's own thread: frames in (a 32-bit big-endian length, then that
/// many bytes), each byte of them from the process the server identified, and replies out.
///
/// The kernel attaches the writer's pid to every byte (`SO_PASSCRED`), and never returns the
/// bytes of two writers in one read, so a frame written, even in part, by any other process
/// than the identified one (a child that inherited the socket, a process it was handed to, one
/// that took it with `pidfd_getfd`) is caught before it is parsed.
public struct ClientSocket: Sendable {
    /// What one wait for a frame brought.
    public enum Received {
        /// A frame, whole or refused (oversized, truncated).
        case frame(InboundFrame)
        /// The client closed its side between frames.
        case closed
        /// Nothing came for the idle time, or a frame begun was not finished in time.
        case timedOut
        /// Bytes written by another process than the identified one: its pid (0: none given).
        case foreignWriter(Int32)
        /// The socket failed.
        case failed(Int32)
    }

    /// Seconds a client has to finish a message it began: a real client writes a message at
    /// once, and the largest (1 MiB) crosses a Unix socket in milliseconds.
    public static let stallTimeout: Int32 = 10
    /// Seconds a reply may wait for a client that does not read before the connection is cut.
    public static let sendTimeout: Int32 = 10
    /// Bytes in a frame's length prefix.
    public static let headerSize = 4

    /// The connected socket.
    public let descriptor: Int32
    /// The longest frame body taken; a longer one is refused unread (``InboundFrame/oversized(_:)``).
    public let maximumFrame: Int

    /// Takes `descriptor`, asking the kernel for each writer's credentials; frames of at most
    /// `maximumFrame` bytes.
    public init(_ descriptor: Int32, maximumFrame: Int) {
        self.descriptor = descriptor
        self.maximumFrame = maximumFrame
        _ = kc_pass_credentials(descriptor)
        _ = kc_set_send_timeout(descriptor, Self.sendTimeout)
    }

    /// True when bytes are waiting to be read: a client that writes before the daemon's greeting
    /// wrote before it was identified.
    public var hasPendingBytes: Bool { kc_pending_bytes(descriptor) != 0 }

    /// The next frame from process `pid`: waits at most `idleSeconds` (nil: no limit) for its
    /// first byte, then ``stallTimeout`` for the rest. A body is read straight into the frame
    /// (a request can carry a secret; the frame is wiped by whoever answers it).
    public func receive(from pid: Int32, idleSeconds: Int32?) -> Received {
        receive(from: pid, idleMilliseconds: idleSeconds.map { $0 * 1000 })
    }

    /// The next frame from process `pid`, waiting at most `idleMilliseconds` (nil: no limit) for
    /// its first byte (``receive(from:idleSeconds:)``).
    public func receive(from pid: Int32, idleMilliseconds: Int32?) -> Received {
        var header = [UInt8](repeating: 0, count: Self.headerSize)
        switch fill(&header, from: pid, firstWait: idleMilliseconds ?? -1) {
        case .filled: break
        case .endedAt(0): return .closed
        case .endedAt: return .frame(.truncated)
        case .stopped(let outcome): return outcome
        }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumFrame else { return .frame(.oversized(length)) }
        var body = [UInt8](repeating: 0, count: length)
        switch fill(&body, from: pid, firstWait: Self.stallTimeout * 1000) {
        case .filled: return .frame(.body(body))
        case .endedAt:
            wipe(&body)
            return .frame(.truncated)
        case .stopped(let outcome):
            wipe(&body)
            return outcome
        }
    }

    private enum Fill {
        case filled
        /// The stream ended after this many bytes.
        case endedAt(Int)
        case stopped(Received)
    }

    /// Fills `bytes` from the socket; the first read waits `firstWait` ms, the rest share
    /// ``stallTimeout`` from the first byte.
    private func fill(_ bytes: inout [UInt8], from pid: Int32, firstWait: Int32) -> Fill {
        var filled = 0
        var deadline: Int64?
        while filled < bytes.count {
            let wait = deadline.map { Int32(clamping: max(0, $0 - Self.milliseconds())) } ?? firstWait
            var sender: Int32 = 0
            let count = bytes.withUnsafeMutableBytes {
                kc_receive_from_process(descriptor, $0.baseAddress! + filled, $0.count - filled, wait, &sender)
            }
            if count == -2 { return .stopped(.timedOut) }
            if count < 0 { return .stopped(.failed(errno)) }
            if count == 0 { return .endedAt(filled) }
            guard sender == pid else {
                wipe(&bytes)
                return .stopped(.foreignWriter(sender))
            }
            filled += count
            deadline = deadline ?? Self.milliseconds() + Int64(Self.stallTimeout) * 1000
        }
        return .filled
    }

    /// Writes one frame, wiping the reply (it may carry a secret); false when the client is
    /// gone or did not read for ``sendTimeout`` seconds.
    @discardableResult
    public func send(_ reply: inout [UInt8]) -> Bool {
        let count = UInt32(reply.count)
        var frame =
            [UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)] + reply
        wipe(&reply)
        defer { wipe(&frame) }
        var sent = 0
        while sent < frame.count {
            let count = frame.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Ends reading: a wait for the next frame returns at once (the daemon stops).
    public func stopReading() {
        _ = shutdown(descriptor, Int32(SHUT_RD))
    }

    /// Closes the socket.
    public func close() {
        _ = Glibc.close(descriptor)
    }

    private func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }

    private static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
