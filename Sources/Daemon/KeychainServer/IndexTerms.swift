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

    private func indexHasher() throws(KeychainError) -> IndexHasher {
        if let hasher { return hasher }
        let made = try enclave.indexHasher()
        hasher = made
        return made
    }

    private func indexHash(_ bytes: Data) throws(KeychainError) -> Data {
        try indexHasher().hash(bytes)
    }

    /// Every request of an app hashes its groups again: remembered with the index key.
    func accessGroupTag(_ group: String) throws(KeychainError) -> Data {
        try indexHasher().hash({ LengthPrefixed.encode(label: "agrp v1", [Data(group.utf8)]) }, remembering: group)
    }

    func attributeHash(_ itemClass: ItemClass, _ name: String, _ value: AttributeValue) throws(KeychainError) -> Data {
        try indexHash(
            LengthPrefixed.encode(
                label: "attr v1", [Data(itemClass.rawValue.utf8), Data(name.utf8), value.canonicalBytes]))
    }

    /// Hashes of every class attribute the record carries.
    func attributeHashes(_ itemClass: ItemClass, _ record: ItemRecord) throws(KeychainError) -> [Data] {
        var hashes: [Data] = []
        for (name, value) in record.attributes where itemClass.attributeType(name) != nil {
            hashes.append(try attributeHash(itemClass, name, value))
        }
        return hashes
    }

    /// The composite primary key: class, access group, synchronizable, and the class's key
    /// attributes (errSecDuplicateItem when two items share it).
    func primaryKeyHash(
        _ itemClass: ItemClass, groupTag: Data, synchronizable: Bool, _ record: ItemRecord
    ) throws(KeychainError) -> Data {
        var fields = LengthPrefixed.Builder(label: "pk v1", capacity: 128)
        fields.append(utf8: itemClass.rawValue)
        fields.append(groupTag)
        fields.append(byte: synchronizable ? 1 : 0)
        for name in itemClass.primaryKey {
            fields.append(utf8: name)
            fields.append(record.attributes[name]?.canonicalBytes ?? Data())
        }
        return try indexHash(fields.encoded())
    }
}
