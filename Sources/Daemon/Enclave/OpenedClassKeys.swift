import Crypto
import Foundation
import KeychainProtocol
import Synchronization

/// A class key with the keys derived from it (HKDF-SHA256, one purpose each): the metadata key
/// that seals attributes, the key that wraps per-item keys, and, keyed once (used from the
/// AfterFirstUnlock class only), the store's index hash and the row ledger's keyed hash; and the
/// addresses of the Secret Service items and the attributes opened with it, which go with it.
struct ClassKeySet: Sendable {
    let classKey: SymmetricKey
    let metadata: SymmetricKey
    let itemKeyWrap: SymmetricKey
    let index: IndexHasher
    let rowLedger: RowLedgerMAC
    let rememberedAddresses = RememberedItemAddresses()
    let openedAttributes = OpenedAttributes()

    init(_ classKey: SymmetricKey) {
        self.classKey = classKey
        metadata = Self.subkey(classKey, "metadata")
        itemKeyWrap = Self.subkey(classKey, "item-key-wrap")
        index = IndexHasher(key: Self.subkey(classKey, "index"))
        rowLedger = RowLedgerMAC(key: Self.subkey(classKey, "row-ledger"))
    }

    static func subkey(_ classKey: SymmetricKey, _ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: classKey, info: Data("swift-keychain \(purpose) v1".utf8), outputByteCount: 32)
    }
}

/// Class keys this process has opened, each remembered with the entry it was opened from: the
/// sealed entry in the class-key cache, or, with no passcode set, the keybag's wrapped key.
///
/// Every use still reads that entry, so a lock by any process (which removes the cache's
/// entries) takes effect at the very next use; only an entry that is still byte for byte the
/// same is not opened and derived from again. An entry found gone or changed is forgotten at
/// once, and a lock made through this process forgets its classes (``forget(_:)``).
final class OpenedClassKeys: Sendable {
    private let opened = Mutex<[String: (source: Data, keys: ClassKeySet)]>([:])

    /// The keys opened from `source` under `name`: remembered ones if `source` is unchanged,
    /// else `open(source)`'s, derived and remembered.
    func keys(
        _ name: String, source: Data, open: (Data) throws(KeychainError) -> SymmetricKey
    ) throws(KeychainError) -> ClassKeySet {
        if let remembered = opened.withLock({ $0[name] }), remembered.source == source { return remembered.keys }
        let keys = ClassKeySet(try open(source))
        opened.withLock { $0[name] = (source, keys) }
        return keys
    }

    /// Forgets the keys opened under `name` (their class was locked or its entry is gone).
    func forget(_ name: String) {
        _ = opened.withLock { $0.removeValue(forKey: name) }
    }
}
