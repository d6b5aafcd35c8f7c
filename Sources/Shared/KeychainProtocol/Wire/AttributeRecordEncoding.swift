import Foundation

/// How an item's attributes are laid out inside their sealed ciphertext: a format byte (0), then
/// the attributes in their wire form (sorted names, a kind tag and a value each, read by
/// ``WireReader`` with every limit checked). Rows written before this format hold JSON, which
/// starts with `{` and is told apart by its first byte.
public enum AttributeRecordEncoding {
    /// The first byte of this format.
    public static let formatByte: UInt8 = 0

    /// `attributes` in this format.
    public static func encode(_ attributes: [String: AttributeValue]) -> Data {
        var writer = WireWriter()
        writer.u8(formatByte)
        WireValues.write(attributes, to: &writer)
        return Data(writer.finish())
    }

    /// True when `bytes` are in this format (not an older JSON record).
    public static func isEncoded(_ bytes: Data) -> Bool {
        bytes.first == formatByte
    }

    /// The attributes in `bytes`, which must be in this format and end with the last one.
    ///
    /// - Throws: ``WireError`` for anything malformed.
    public static func decode(_ bytes: Data) throws(WireError) -> [String: AttributeValue] {
        var reader = WireReader(Array(bytes))
        guard try reader.u8() == formatByte else { throw WireError("an attribute record in an unknown format") }
        let attributes = try WireValues.attributes(&reader)
        guard reader.remaining == 0 else { throw WireError("bytes after an attribute record") }
        return attributes
    }
}
