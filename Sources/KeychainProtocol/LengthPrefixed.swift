import Foundation

/// An unambiguous encoding of a list of byte strings: each field is preceded by its length as
/// a 32-bit big-endian integer, so no two different lists encode alike. Used for associated
/// data and keyed-hash inputs.
public enum LengthPrefixed {
    /// Encodes `fields`, after a fixed `label` that names the format and its version.
    public static func encode(label: String, _ fields: [Data]) -> Data {
        var data = Data(label.utf8)
        for field in fields {
            withUnsafeBytes(of: UInt32(field.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(field)
        }
        return data
    }
}
