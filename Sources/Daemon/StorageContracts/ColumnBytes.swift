import Foundation

/// The bytes of a short column of a keychain row, the row's identity (16 random bytes) or a
/// keyed hash (32), held in four words with no allocation of their own.
///
/// A search that answers with references reads two such columns of every row it finds, and as
/// `Data` each was an allocation, a release and checked accesses: a third of the instructions
/// of a Secret Service search for every one of 2,000 items (callgrind). A column longer than 32
/// bytes, which only an altered database holds, is kept as its bytes, so that it is still told
/// apart and refused.
public struct ColumnBytes: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private let count: Int
    private let longer: Data?

    /// The most bytes held in the words.
    static let inlineCapacity = 32

    /// Holds a copy of `bytes`.
    public init(_ bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        guard bytes.count <= Self.inlineCapacity else {
            longer = Data(bytes)
            return
        }
        longer = nil
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    }

    /// Holds a copy of `data`'s bytes.
    public init(_ data: Data) {
        self = data.withUnsafeBytes { ColumnBytes($0) }
    }

    /// The bytes, as `Data`.
    public var data: Data {
        if let longer { return longer }
        return Swift.withUnsafeBytes(of: words) { Data($0.prefix(count)) }
    }

    /// Hands `body` the bytes.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if let longer { return try longer.withUnsafeBytes(body) }
        return try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    public static func == (left: ColumnBytes, right: ColumnBytes) -> Bool {
        left.count == right.count && left.words == right.words && left.longer == right.longer
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(longer)
    }
}
