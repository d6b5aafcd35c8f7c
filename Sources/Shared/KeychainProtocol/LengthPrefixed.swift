import Foundation

/// An unambiguous encoding of a list of byte strings: each field is preceded by its length as
/// a 32-bit big-endian integer, so no two different lists encode alike. Used for associated
/// data and keyed-hash inputs.
public enum LengthPrefixed {
    /// Encodes `fields`, after a fixed `label` that names the format and its version.
    public static func encode(label: String, _ fields: [Data]) -> Data {
        var builder = Builder(label: label, capacity: fields.reduce(0) { $0 + 4 + $1.count })
        for field in fields { builder.append(field) }
        return builder.encoded()
    }

    /// The same encoding built a field at a time, with no list of fields in between (the
    /// associated data of every sealed part of every item is built so).
    public struct Builder {
        private var bytes: [UInt8] = []

        /// Starts with `label`, reserving room for `capacity` more bytes.
        public init(label: String, capacity: Int) {
            bytes.reserveCapacity(label.utf8.count + capacity)
            bytes.append(contentsOf: label.utf8)
        }

        /// Appends one field.
        public mutating func append(_ field: Data) {
            appendLength(field.count)
            field.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }

        /// Appends one field, the UTF-8 of `text`.
        public mutating func append(utf8 text: String) {
            appendLength(text.utf8.count)
            bytes.append(contentsOf: text.utf8)
        }

        /// Appends one field of one byte.
        public mutating func append(byte: UInt8) {
            appendLength(1)
            bytes.append(byte)
        }

        /// Appends one field, `value` in 8 big-endian bytes.
        public mutating func append(bigEndian value: UInt64) {
            appendLength(8)
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }

        /// The encoding.
        public func encoded() -> Data {
            Data(bytes)
        }

        private mutating func appendLength(_ count: Int) {
            let length = UInt32(count)
            bytes.append(UInt8(length >> 24))
            bytes.append(UInt8(length >> 16 & 0xff))
            bytes.append(UInt8(length >> 8 & 0xff))
            bytes.append(UInt8(length & 0xff))
        }
    }
}
