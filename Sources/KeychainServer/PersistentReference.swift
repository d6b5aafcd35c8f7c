import Foundation
import KeychainProtocol

/// The `kSecValuePersistentRef` format: "SWKC1", the class's 4-byte raw value, then the row's
/// 16-byte identity. Opaque to callers, stable for the item's life, meaningless elsewhere.
enum PersistentReference {
    static let magic = Data("SWKC1".utf8)

    static func make(itemClass: ItemClass, identity: Data) -> Data {
        magic + Data(itemClass.rawValue.utf8) + identity
    }

    /// The identity inside `reference`, or `errSecParam` when it is not one of ours or names
    /// another class.
    static func identity(in reference: Data, itemClass: ItemClass) throws(KeychainError) -> Data {
        let reference = Data(reference)
        let classBytes = Data(itemClass.rawValue.utf8)
        guard reference.count == magic.count + classBytes.count + 16,
            reference.prefix(magic.count) == magic,
            reference.dropFirst(magic.count).prefix(classBytes.count) == classBytes
        else {
            throw KeychainError(.errSecParam, "kSecValuePersistentRef is not a persistent reference to a \(itemClass.rawValue) item")
        }
        return reference.suffix(16)
    }
}
