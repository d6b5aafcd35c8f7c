import Foundation
import KeychainProtocol

/// An item's attributes as sealed in its row: class attributes plus `agrp`, `pdmn`, `sync`,
/// `cdat` and `mdat`, by Apple's raw names.
struct ItemRecord: Codable, Sendable {
    var attributes: [String: AttributeValue]

    func encoded() throws(KeychainError) -> Data {
        do {
            return try JSONEncoder().encode(self)
        } catch {
            throw KeychainError(.errSecInternalComponent, "cannot encode item attributes")
        }
    }

    static func decode(_ data: Data) throws(KeychainError) -> ItemRecord {
        do {
            return try JSONDecoder().decode(ItemRecord.self, from: data)
        } catch {
            throw KeychainError(.errSecDecode, "an item's attributes could not be decoded")
        }
    }

    /// True when every attribute in `query` has the same value here.
    func matches(_ query: [String: AttributeValue]) -> Bool {
        query.allSatisfy { attributes[$0.key] == $0.value }
    }
}
