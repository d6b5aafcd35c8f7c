import Foundation

/// The bytes of a short column of a keychain row, the row's identity (16 random bytes) or a
/// keyed hash (32), held in four words: no allocation, and copied as plain bytes.
///
/// A search that answers with references reads two such columns of every row it finds, and as
/// `Data` each was an allocation, a release and checked accesses: a third of the instructions
/// of a Secret Service search for every one of 2,000 items (callgrind). The keychain writes no
/// such column longer than 32 bytes; one is refused (nil), as only an altered database holds it.
public struct ColumnBytes: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private let count: UInt8

    /// The most bytes a column of this kind holds.
    public static let capacity = 32

    /// No bytes.
    public static let empty = ColumnBytes(count: 0)

    private init(count: UInt8) {
        self.count = count
    }

    /// Holds a copy of `bytes`; nil when they are more than ``capacity``.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Self.capacity else { return nil }
        count = UInt8(bytes.count)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    }

    /// Holds a copy of `data`'s bytes; nil when they are more than ``capacity``.
    public init?(_ data: Data) {
        guard let bytes = data.withUnsafeBytes({ ColumnBytes($0) }) else { return nil }
        self = bytes
    }

    /// The bytes, as `Data`.
    public var data: Data {
        withUnsafeBytes { Data($0) }
    }

    /// Hands `body` the bytes.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
    }

    public static func == (left: ColumnBytes, right: ColumnBytes) -> Bool {
        left.count == right.count && left.words == right.words
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
