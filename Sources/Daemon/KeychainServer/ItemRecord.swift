import Foundation
import KeychainProtocol

/// An item's attributes as sealed in its row: class attributes plus `agrp`, `pdmn`, `sync`,
/// `cdat` and `mdat`, by Apple's raw names.
///
/// Written in ``AttributeRecordEncoding`` (binary, read with checked limits); rows written by
/// earlier versions hold JSON and are still read. Decoding JSON cost a fifth of a read's
/// instructions and half of a 100-item query's.
struct ItemRecord: Decodable, Sendable {
    var attributes: [String: AttributeValue]

    func encoded() -> Data {
        AttributeRecordEncoding.encode(attributes)
    }

    static func decode(_ data: Data) throws(KeychainError) -> ItemRecord {
        if AttributeRecordEncoding.isEncoded(data) {
            do {
                return ItemRecord(attributes: try AttributeRecordEncoding.decode(data))
            } catch {
                throw KeychainError(.errSecDecode, "an item's attributes could not be decoded: \(error.reason)")
            }
        }
        do {
            return try JSONDecoder().decode(ItemRecord.self, from: data)
        } catch {
            throw KeychainError(.errSecDecode, "an item's attributes could not be decoded")
        }
    }

    /// True when every attribute in `query` has the same value here. `caseInsensitively`
    /// (`kSecMatchCaseInsensitive`) compares strings with Foundation's case-insensitive
    /// comparison, which folds case beyond ASCII (UNCONFIRMED how far iOS folds; it documents
    /// only that case is ignored).
    func matches(_ query: [String: AttributeValue], caseInsensitively: Bool = false) -> Bool {
        query.allSatisfy { name, wanted in
            if caseInsensitively, case .string(let text)? = attributes[name], case .string(let wantedText) = wanted {
                return text.caseInsensitiveCompare(wantedText) == .orderedSame
            }
            return attributes[name] == wanted
        }
    }
}
