import Enclave
import Foundation
import KeychainProtocol

/// The keyed hashes the store indexes: access-group tags, one hash per attribute value, and the
/// composite primary key. All come from the Enclave's index key, so they reveal nothing
/// without it. One request's terms share one hasher, asked of the Enclave at the first hash
/// (one class-key lookup and one key derivation per request, not per hash).
final class IndexTerms {
    private let enclave: Enclave
    private var hasher: IndexHasher?

    init(enclave: Enclave) {
        self.enclave = enclave
    }

    private func indexHash(_ bytes: Data) throws(KeychainError) -> Data {
        if let hasher { return hasher.hash(bytes) }
        let made = try enclave.indexHasher()
        hasher = made
        return made.hash(bytes)
    }

    func accessGroupTag(_ group: String) throws(KeychainError) -> Data {
        try indexHash(LengthPrefixed.encode(label: "agrp v1", [Data(group.utf8)]))
    }

    func attributeHash(_ itemClass: ItemClass, _ name: String, _ value: AttributeValue) throws(KeychainError) -> Data {
        try indexHash(LengthPrefixed.encode(label: "attr v1", [Data(itemClass.rawValue.utf8), Data(name.utf8), value.canonicalBytes]))
    }

    /// Hashes of every class attribute the record carries.
    func attributeHashes(_ itemClass: ItemClass, _ record: ItemRecord) throws(KeychainError) -> [Data] {
        var hashes: [Data] = []
        for (name, value) in record.attributes where itemClass.attributes[name] != nil {
            hashes.append(try attributeHash(itemClass, name, value))
        }
        return hashes
    }

    /// The composite primary key: class, access group, synchronizable, and the class's key
    /// attributes (errSecDuplicateItem when two items share it).
    func primaryKeyHash(_ itemClass: ItemClass, groupTag: Data, synchronizable: Bool, _ record: ItemRecord) throws(KeychainError) -> Data {
        var fields = [Data(itemClass.rawValue.utf8), groupTag, Data([synchronizable ? 1 : 0])]
        for name in itemClass.primaryKey {
            fields.append(Data(name.utf8))
            fields.append(record.attributes[name]?.canonicalBytes ?? Data())
        }
        return try indexHash(LengthPrefixed.encode(label: "pk v1", fields))
    }
}
