import Foundation

/// When a synchronizable item changed, by a hybrid logical clock (``HybridLogicalClock``): the
/// wall clock in milliseconds (48 bits), a counter for changes within one millisecond or while
/// the wall clock lags (16 bits), and the device that made the change (its 16-byte id), which
/// orders two changes with the same time. Two changes of one item are ordered the same way on
/// every machine: the later one wins (Docs/Sync.md, "Conflicts").
public struct SyncTimestamp: Comparable, Hashable, Sendable {
    /// Milliseconds since 1970, at most 2^48 − 1.
    public var milliseconds: UInt64
    /// Orders changes within one millisecond.
    public var counter: UInt16
    /// The id of the device that made the change: 16 bytes.
    public var device: Data

    /// The 24 bytes a record carries: milliseconds (6), counter (2), device (16).
    public var encoded: Data {
        var bytes = Data(capacity: 24)
        for shift in stride(from: 40, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: milliseconds >> shift))
        }
        bytes.append(UInt8(counter >> 8))
        bytes.append(UInt8(counter & 0xFF))
        bytes.append(device)
        return bytes
    }

    /// Reads what ``encoded`` wrote; nil for anything else.
    public init?(_ bytes: Data) {
        let bytes = Data(bytes)
        guard bytes.count == 24 else { return nil }
        milliseconds = bytes.prefix(6).reduce(0) { $0 << 8 | UInt64($1) }
        counter = UInt16(bytes[6]) << 8 | UInt16(bytes[7])
        device = bytes.suffix(16)
    }

    /// A timestamp.
    public init(milliseconds: UInt64, counter: UInt16, device: Data) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.device = device
    }

    /// Later milliseconds, then a later counter, then the larger device id.
    public static func < (a: SyncTimestamp, b: SyncTimestamp) -> Bool {
        if a.milliseconds != b.milliseconds { return a.milliseconds < b.milliseconds }
        if a.counter != b.counter { return a.counter < b.counter }
        return a.device.lexicographicallyPrecedes(b.device)
    }
}
