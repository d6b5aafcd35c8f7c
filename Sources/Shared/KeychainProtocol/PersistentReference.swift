import Foundation

/// The `kSecValuePersistentRef` format: "SWKC1", the class's 4-byte raw value, then the row's
/// 16-byte identity. Opaque to callers, stable for the item's life, meaningless elsewhere.
public enum PersistentReference {
    static let magic = Data("SWKC1".utf8)

    /// A reference to the row with `identity`, of `itemClass`.
    public static func make(itemClass: ItemClass, identity: Data) -> Data {
        magic + Data(itemClass.rawValue.utf8) + identity
    }

    /// The identity inside `reference`, or `errSecParam` when it is not one of ours or names
    /// another class.
    public static func identity(in reference: Data, itemClass: ItemClass) throws(KeychainError) -> Data {
        let reference = Data(reference)
        let classBytes = Data(itemClass.rawValue.utf8)
        guard reference.count == magic.count + classBytes.count + 16,
            reference.prefix(magic.count) == magic,
            reference.dropFirst(magic.count).prefix(classBytes.count) == classBytes
        else {
            throw KeychainError(
                .errSecParam, "kSecValuePersistentRef is not a persistent reference to a \(itemClass.rawValue) item")
        }
        return reference.suffix(16)
    }

    /// The class `reference` names, or nil when it is not one of ours: a query by persistent
    /// reference alone (no `kSecClass`) finds its item, as on iOS.
    public static func itemClass(of reference: Data) -> ItemClass? {
        let reference = Data(reference)
        guard reference.count == magic.count + 4 + 16, reference.prefix(magic.count) == magic else { return nil }
        return String(data: reference.dropFirst(magic.count).prefix(4), encoding: .utf8).flatMap(
            ItemClass.init(rawValue:))
    }
}
