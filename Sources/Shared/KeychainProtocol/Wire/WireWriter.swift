import Foundation

/// Builds a message in the keychain's wire format: big-endian integers, byte strings and text
/// preceded by their 32-bit length, optionals and enum cases preceded by a one-byte tag.
///
/// A message that carries a secret (a passcode, an item's data) holds it in ``bytes``: call
/// ``wipe()`` once it is sent.
public struct WireWriter {
    /// The message so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty message.
    public init() {}

    public mutating func u8(_ value: UInt8) { bytes.append(value) }
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
    public mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
    public mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    public mutating func int(_ value: Int) { i64(Int64(value)) }
    public mutating func double(_ value: Double) { u64(value.bitPattern) }

    /// A byte string: its length, then the bytes.
    public mutating func data(_ value: Data) {
        u32(UInt32(clamping: value.count))
        bytes.append(contentsOf: value)
    }

    /// Text: its UTF-8 length, then the bytes.
    public mutating func string(_ value: String) {
        u32(UInt32(clamping: value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// A secret, copied straight from its protected memory.
    public mutating func secret(_ value: SecretBytes) {
        u32(UInt32(clamping: value.count))
        value.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    /// A tag (0 absent, 1 present), then the value when present.
    public mutating func optional<Value>(_ value: Value?, _ write: (inout WireWriter, Value) -> Void) {
        guard let value else { return u8(0) }
        u8(1)
        write(&self, value)
    }

    /// A count, then each element.
    public mutating func array<Element>(_ values: [Element], _ write: (inout WireWriter, Element) -> Void) {
        u32(UInt32(clamping: values.count))
        for value in values { write(&self, value) }
    }

    /// Zeroes the message (it may hold a secret).
    public mutating func wipe() {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { _ = memset(base, 0, buffer.count) }
        }
    }

    /// The finished message.
    public func finish() -> [UInt8] { bytes }
}
