import Foundation

/// An unambiguous encoding of a list of byte strings: each field is preceded by its length as
/// a 32-bit big-endian integer, so no two different lists encode alike. Used for associated
/// data and keyed-hash inputs.
public enum LengthPrefixed {
    /// Encodes `fields`, after a fixed `label` that names the format and its version.
    public static func encode(label: String, _ fields: [Data]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(label.utf8.count + fields.reduce(0) { $0 + 4 + $1.count })
        bytes.append(contentsOf: label.utf8)
        for field in fields {
            let count = UInt32(field.count)
            bytes.append(contentsOf: [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)])
            bytes.append(contentsOf: field)
        }
        return Data(bytes)
    }
}
