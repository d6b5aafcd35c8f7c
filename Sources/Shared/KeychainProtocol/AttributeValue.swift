import Foundation

/// One typed attribute value, as the keychain stores and compares it.
///
/// Values are compared exactly (case- and width-sensitive), as `SecItemCopyMatching` does by
/// default.
public enum AttributeValue: Sendable, Hashable, Codable {
    case string(String)
    case data(Data)
    case number(Int64)
    case bool(Bool)
    case date(Date)

    /// The kind of value an attribute holds.
    public enum Kind: String, Sendable {
        case string, data, number, bool, date
    }

    /// This value's kind.
    public var kind: Kind {
        switch self {
        case .string: .string
        case .data: .data
        case .number: .number
        case .bool: .bool
        case .date: .date
        }
    }

    /// The value as text: a string, or data that is UTF-8 (a Secret Service item's label or
    /// content type may come as either); nil for anything else.
    public var text: String? {
        switch self {
        case .string(let text): text
        case .data(let data): String(validating: data, as: UTF8.self)
        default: nil
        }
    }

    /// A canonical byte encoding: kind tag, then the value. Used for keyed index hashes, so two
    /// values hash alike exactly when they are equal.
    public var canonicalBytes: Data {
        var bytes = Data()
        switch self {
        case .string(let s):
            bytes.append(0x01)
            bytes.append(contentsOf: Array(s.utf8))
        case .data(let d):
            bytes.append(0x02)
            bytes.append(d)
        case .number(let n):
            bytes.append(0x03)
            withUnsafeBytes(of: n.bigEndian) { bytes.append(contentsOf: $0) }
        case .bool(let b):
            bytes.append(0x04)
            bytes.append(b ? 1 : 0)
        case .date(let d):
            bytes.append(0x05)
            withUnsafeBytes(of: d.timeIntervalSinceReferenceDate.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }
}
