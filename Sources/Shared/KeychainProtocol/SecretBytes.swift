import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Secret bytes (a passcode, an item's data) kept in memory that is locked against swap,
/// left out of core dumps, and zeroed when the last reference goes away.
///
/// The bytes are fixed at creation; copies share one buffer, so there is exactly one place to
/// wipe. Use ``withUnsafeBytes(_:)`` to read them without making a copy that outlives the call.
public final class SecretBytes: @unchecked Sendable {
    // Immutable after init; @unchecked because the buffer is a raw pointer.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into protected memory. The caller should wipe its own copy.
    public init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        var array = Array(bytes)
        let buffer = SecretMemory.shared.allocate(array.count)
        array.withUnsafeMutableBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(source))
            if let base = source.baseAddress { _ = memset(base, 0, source.count) }
        }
        self.buffer = buffer
        count = array.count
    }

    /// Copies a string's UTF-8 bytes into protected memory.
    public convenience init(utf8 string: String) {
        self.init(string.utf8)
    }

    /// The number of secret bytes.
    public let count: Int

    /// Calls `body` with the bytes. Do not let the pointer escape.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// A `Data` copy, for handing the secret to the caller that asked for it. The copy is the
    /// caller's to wipe.
    public func copyData() -> Data {
        withUnsafeBytes { Data($0) }
    }

    /// True when both hold the same bytes; compares in constant time for equal lengths.
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                var difference: UInt8 = 0
                for i in 0..<count { difference |= a[i] ^ b[i] }
                return difference == 0
            }
        }
    }

    deinit {
        SecretMemory.shared.release(buffer)
    }
}
