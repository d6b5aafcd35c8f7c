import Foundation

/// Reads a message in the keychain's wire format (see ``WireWriter``), trusting nothing: every
/// length is checked against what remains and against a limit before anything is allocated,
/// text must be UTF-8, tags must be known, and a message must be read to its last byte.
public struct WireReader {
    private let bytes: [UInt8]
    private var position = 0

    /// A reader over `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// How many bytes are left.
    public var remaining: Int { bytes.count - position }

    // The reads below take bytes by index rather than as slices of `bytes`: each slice retained
    // and released the array, and a record's ten attributes take some forty fields (callgrind:
    // a fifth of decoding an item's attributes).

    /// Checks that `count` more bytes are there, and moves past them; returns where they start.
    private mutating func advance(_ count: Int) throws(WireError) -> Int {
        guard count >= 0, count <= remaining else {
            throw WireError("truncated: \(count) bytes needed, \(remaining) left")
        }
        defer { position += count }
        return position
    }

    private mutating func take(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        let start = try advance(count)
        return bytes[start..<start + count]
    }

    public mutating func u8() throws(WireError) -> UInt8 { bytes[try advance(1)] }

    public mutating func bool() throws(WireError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw WireError("a flag that is neither 0 nor 1")
        }
    }

    public mutating func u32() throws(WireError) -> UInt32 {
        let start = try advance(4)
        var value: UInt32 = 0
        for index in start..<start + 4 { value = value << 8 | UInt32(bytes[index]) }
        return value
    }

    public mutating func u64() throws(WireError) -> UInt64 {
        let start = try advance(8)
        var value: UInt64 = 0
        for index in start..<start + 8 { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    public mutating func i64() throws(WireError) -> Int64 { Int64(bitPattern: try u64()) }

    /// An integer that must lie in `range`.
    public mutating func int(in range: ClosedRange<Int>) throws(WireError) -> Int {
        let value = try i64()
        guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
            throw WireError("a number outside \(range.lowerBound)...\(range.upperBound)")
        }
        return Int(value)
    }

    /// A finite number.
    public mutating func double() throws(WireError) -> Double {
        let value = Double(bitPattern: try u64())
        guard value.isFinite else { throw WireError("a number that is not finite") }
        return value
    }

    /// The seconds from 1970 of the earliest and the latest date a decoder takes: the years 1 to
    /// 9999, as Foundation's calendar and every date the keychain writes. A date beyond (a
    /// backup's item dated 10^300 seconds on) is refused where it is read, so no later
    /// conversion of it (to milliseconds, to an integer) can trap.
    public static let dateRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// A date written as seconds since 1970 (`sinceReferenceDate`: since 2001, Apple's
    /// reference date), within ``dateRange``.
    public mutating func date(sinceReferenceDate: Bool = false) throws(WireError) -> Date {
        let seconds = try double()
        let since1970 = sinceReferenceDate ? seconds + Date.timeIntervalBetween1970AndReferenceDate : seconds
        guard Self.dateRange.contains(since1970) else { throw WireError("a date outside the years 1 to 9999") }
        return Date(timeIntervalSince1970: since1970)
    }

    /// A number of seconds (a timeout, a delay) within `range`.
    public mutating func seconds(in range: ClosedRange<Double>) throws(WireError) -> Double {
        let value = try double()
        guard range.contains(value) else {
            throw WireError("\(value) seconds, outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    private mutating func length(max: Int) throws(WireError) -> Int {
        let count = Int(try u32())
        guard count <= max else { throw WireError("a field of \(count) bytes, more than the \(max) allowed") }
        return count
    }

    /// A byte string of at most `max` bytes.
    public mutating func data(max: Int) throws(WireError) -> Data {
        Data(try take(length(max: max)))
    }

    /// UTF-8 text of at most `max` bytes.
    public mutating func string(max: Int) throws(WireError) -> String {
        let count = try length(max: max)
        let start = try advance(count)
        // `String(validating:)` is generic and unspecialized here (a fifth of a 100-item query's
        // instructions); `String(decoding:)` is fast, and replaces what is not UTF-8, so the
        // bytes come back unchanged exactly when they were valid.
        let text: String? = bytes.withUnsafeBufferPointer { all in
            let utf8 = UnsafeBufferPointer(rebasing: all[start..<start + count])
            var text = String(decoding: utf8, as: UTF8.self)
            let unchanged =
                text.utf8.count == count
                && (count == 0 || text.withUTF8 { memcmp($0.baseAddress!, utf8.baseAddress!, count) == 0 })
            return unchanged ? text : nil
        }
        guard let text else { throw WireError("text that is not UTF-8") }
        return text
    }

    /// A secret of at most `max` bytes, copied straight into protected memory.
    public mutating func secret(max: Int) throws(WireError) -> SecretBytes {
        SecretBytes(try take(length(max: max)))
    }

    /// An optional written by ``WireWriter/optional(_:_:)``.
    public mutating func optional<Value>(
        _ read: (inout WireReader) throws(WireError) -> Value
    ) throws(WireError) -> Value? {
        switch try u8() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw WireError("an optional's tag that is neither 0 nor 1")
        }
    }

    /// An array of at most `max` elements. Each element takes at least one byte, so a count
    /// larger than what remains is refused before anything is allocated.
    public mutating func array<Element>(
        max: Int, _ read: (inout WireReader) throws(WireError) -> Element
    ) throws(WireError) -> [Element] {
        let count = try count(max: max)
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try read(&self)) }
        return elements
    }

    /// The count of a list of at most `max` elements, each of at least one byte: a count larger
    /// than what remains is refused before anything is allocated.
    public mutating func count(max: Int) throws(WireError) -> Int {
        let count = Int(try u32())
        guard count <= max, count <= remaining else {
            throw WireError("a list of \(count) elements, more than allowed or than the message holds")
        }
        return count
    }

    /// Checks that the whole message was read.
    public func finish() throws(WireError) {
        guard remaining == 0 else { throw WireError("\(remaining) bytes after the end of the message") }
    }
}
