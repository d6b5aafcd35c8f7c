import Crypto
import Foundation
import KeychainProtocol

/// What every ciphertext of an item is bound to (AES-GCM associated data): its row identity,
/// class, accessibility, access group (by its keyed tag) and synchronizable flag. A sealed value
/// moved to another row, group or class, or a row whose clear columns were edited, fails to
/// open (DESIGN.md, Data protection). Every field comes from the row's own clear columns.
public struct ItemBinding: Sendable, Hashable {
    /// The row's permanent random identity (16 bytes; also the persistent reference).
    public var rowIdentity: Data
    /// The item class's raw value (`genp`, …).
    public var itemClass: String
    /// The item's accessibility; its protection class picks the class key.
    public var accessibility: Accessibility
    /// The keyed tag of the item's access group.
    public var accessGroupTag: Data
    /// The item's synchronizable flag.
    public var synchronizable: Bool

    /// Creates a binding.
    public init(rowIdentity: Data, itemClass: String, accessibility: Accessibility, accessGroupTag: Data, synchronizable: Bool) {
        self.rowIdentity = rowIdentity
        self.itemClass = itemClass
        self.accessibility = accessibility
        self.accessGroupTag = accessGroupTag
        self.synchronizable = synchronizable
    }

    var protectionClass: ProtectionClass { accessibility.protectionClass }

    /// `purpose` keeps the item's three ciphertexts from standing in for one another.
    func associatedData(_ purpose: String) -> Data {
        LengthPrefixed.encode(label: "swift-keychain item v1", [
            Data(purpose.utf8), rowIdentity, Data(itemClass.utf8), Data(accessibility.rawValue.utf8),
            accessGroupTag, Data([synchronizable ? 1 : 0]),
        ])
    }
}

/// An item's three ciphertexts, as the store keeps them.
public struct SealedItem: Sendable, Hashable {
    /// The attributes, sealed with the class's metadata key.
    public var metadata: Data
    /// The per-item key, sealed with the class key.
    public var wrappedKey: Data
    /// The secret, sealed with the per-item key.
    public var secret: Data

    /// Creates a sealed item from its parts.
    public init(metadata: Data, wrappedKey: Data, secret: Data) {
        self.metadata = metadata
        self.wrappedKey = wrappedKey
        self.secret = secret
    }
}

extension Enclave {
    private func subkey(_ classKey: SymmetricKey, _ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: classKey, info: Data("swift-keychain \(purpose) v1".utf8), outputByteCount: 32)
    }

    /// Seals a new item: a fresh random per-item key encrypts the secret; the class key wraps
    /// that key; the class's metadata key encrypts the attributes. AES-256-GCM throughout.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecNotAvailable`
    ///   for WhenPasscodeSet with no passcode.
    public func seal(attributes: Data, secret: SecretBytes?, binding: ItemBinding) throws(KeychainError) -> SealedItem {
        let classKey = try classKey(binding.protectionClass)
        let itemKey = SymmetricKey(size: .bits256)
        do {
            let metadata = try AES.GCM.seal(attributes, using: subkey(classKey, "metadata"), authenticating: binding.associatedData("metadata"))
            let wrapped = try itemKey.withUnsafeBytes {
                try AES.GCM.seal($0, using: subkey(classKey, "item-key-wrap"), authenticating: binding.associatedData("item-key"))
            }
            let sealedSecret = try (secret ?? SecretBytes([])).withUnsafeBytes {
                try AES.GCM.seal($0, using: itemKey, authenticating: binding.associatedData("secret"))
            }
            guard let m = metadata.combined, let w = wrapped.combined, let s = sealedSecret.combined else {
                throw KeychainError.errSecInternalComponent
            }
            return SealedItem(metadata: m, wrappedKey: w, secret: s)
        } catch {
            throw KeychainError(.errSecInternalComponent, "sealing the item failed: \(error)")
        }
    }

    /// Opens an item's attributes.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecDecode` when the
    ///   ciphertext was altered or belongs to another row.
    public func openAttributes(_ metadata: Data, binding: ItemBinding) throws(KeychainError) -> Data {
        let classKey = try classKey(binding.protectionClass)
        return try open(metadata, subkey(classKey, "metadata"), binding.associatedData("metadata"))
    }

    /// Opens an item's secret: unwraps the per-item key with the class key, then the secret.
    ///
    /// - Throws: as ``openAttributes(_:binding:)``.
    public func openSecret(_ item: SealedItem, binding: ItemBinding) throws(KeychainError) -> SecretBytes {
        let classKey = try classKey(binding.protectionClass)
        var keyBytes = try open(item.wrappedKey, subkey(classKey, "item-key-wrap"), binding.associatedData("item-key"))
        defer { keyBytes.resetBytes(in: 0..<keyBytes.count) }
        var secret = try open(item.secret, SymmetricKey(data: keyBytes), binding.associatedData("secret"))
        defer { secret.resetBytes(in: 0..<secret.count) }
        return SecretBytes(secret)
    }

    /// A keyed hash (HMAC-SHA256) for the store's lookup columns. The key derives from the
    /// AfterFirstUnlock class key, so before the first unlock nothing can be searched, and
    /// without the device secret (and the passcode, when set) the hashes reveal nothing.
    public func indexHash(_ bytes: Data) throws(KeychainError) -> Data {
        let key = subkey(try classKey(.afterFirstUnlock), "index")
        return Data(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    private func open(_ combined: Data, _ key: SymmetricKey, _ associatedData: Data) throws(KeychainError) -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw KeychainError(.errSecDecode, "an item failed authentication: its database row was altered, damaged or moved from another row")
        }
    }
}
