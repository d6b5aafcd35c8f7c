import Crypto
import CryptoExtras
import Foundation
import KeychainProtocol
import StorageContracts
import Synchronization

/// What every ciphertext of an item is bound to (AES-GCM associated data): its row identity,
/// version, class, accessibility, access group (by its keyed tag), synchronizable flag and
/// access control. A sealed value moved to another row, group or class, a row whose clear
/// columns were edited, or ciphertexts from an older version of the row, fail to open
/// (DESIGN.md, Data protection). Every field comes from the row's own clear columns.
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
    /// The item's access control, if it has one.
    public var accessControl: StoredAccessControl? {
        didSet { encodedAccessControl = accessControl?.encoded() ?? Data() }
    }
    /// `accessControl` as bound into the associated data, encoded once rather than for each of
    /// the item's ciphertexts.
    private var encodedAccessControl: Data
    /// The row's version: 1 when added, one more at every update. The store's row ledger
    /// remembers each row's version, so a row written back from an older copy is refused, and
    /// binding it here keeps an older row's ciphertexts from passing for the current version.
    /// 0 marks a row sealed before versions existed, whose associated data has no version.
    public var version: Int64

    /// Creates a binding.
    public init(
        rowIdentity: Data, version: Int64, itemClass: String, accessibility: Accessibility,
        accessGroupTag: Data, synchronizable: Bool, accessControl: StoredAccessControl? = nil
    ) {
        self.rowIdentity = rowIdentity
        self.version = version
        self.itemClass = itemClass
        self.accessibility = accessibility
        self.accessGroupTag = accessGroupTag
        self.synchronizable = synchronizable
        self.accessControl = accessControl
        encodedAccessControl = accessControl?.encoded() ?? Data()
    }

    var protectionClass: ProtectionClass { accessibility.protectionClass }

    /// `purpose` keeps the item's three ciphertexts from standing in for one another.
    func associatedData(_ purpose: String) -> Data {
        let accessControl = encodedAccessControl
        var builder = LengthPrefixed.Builder(
            label: "swift-keychain item v1",
            capacity: 96 + rowIdentity.count + accessGroupTag.count + accessControl.count)
        builder.append(utf8: purpose)
        builder.append(rowIdentity)
        builder.append(utf8: itemClass)
        builder.append(utf8: accessibility.rawValue)
        builder.append(accessGroupTag)
        builder.append(byte: synchronizable ? 1 : 0)
        builder.append(accessControl)
        if version != 0 { builder.append(bigEndian: UInt64(bitPattern: version)) }
        return builder.encoded()
    }
}

/// The keyed hash of the store's lookup columns (``Enclave/indexHasher()``). It holds the index
/// key for the length of one request and never gives it out.
public struct IndexHasher: Sendable {
    /// HMAC's state after the key: copied for each hash, so the key is set up once.
    private let keyed: HMAC<SHA256>
    /// Hashes asked for by name (``hash(_:remembering:)``), kept as long as the key is.
    private let remembered: RememberedHashes

    init(key: SymmetricKey) {
        keyed = HMAC<SHA256>(key: key)
        remembered = RememberedHashes()
    }

    /// HMAC-SHA256 of `bytes` under the index key.
    public func hash(_ bytes: Data) -> Data {
        var hmac = keyed
        hmac.update(data: bytes)
        return Data(hmac.finalize())
    }

    /// The hash of `bytes()`, remembered under `name` for later requests with the same key: for
    /// the few values every request hashes again (an app's access-group tags).
    public func hash(_ bytes: () -> Data, remembering name: String) -> Data {
        if let known = remembered.hashes.withLock({ $0[name] }) { return known }
        let made = hash(bytes())
        remembered.hashes.withLock { if $0.count < RememberedHashes.limit { $0[name] = made } }
        return made
    }

    /// What ``hash(_:remembering:)`` keeps: at most ``limit`` hashes, so that no caller can
    /// make it grow without end.
    private final class RememberedHashes: Sendable {
        static let limit = 256
        let hashes = Mutex<[String: Data]>([:])
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
    /// Seals a new item: a fresh random per-item key encrypts the secret; the class key wraps
    /// that key; the class's metadata key encrypts the attributes. AES-256-GCM throughout.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecNotAvailable`
    ///   for WhenPasscodeSet with no passcode.
    public func seal(
        attributes: Data, secret: SecretBytes?, binding: ItemBinding, applicationPassword: SecretBytes? = nil
    ) throws(KeychainError) -> SealedItem {
        let keys = try classKeys(binding.protectionClass)
        let itemKey = SymmetricKey(size: .bits256)
        var keyBytes = itemKey.withUnsafeBytes { Data($0) }
        defer { keyBytes.resetBytes(in: 0..<keyBytes.count) }
        if binding.accessControl?.control.flags.contains(.applicationPassword) == true {
            // The app's password seals the item key inside the class key's wrap: without the
            // password the key cannot be recovered, whatever else is satisfied.
            guard let applicationPassword else { throw applicationPasswordRequired(binding) }
            keyBytes = try sealWithApplicationPassword(keyBytes, applicationPassword, binding)
        }
        do {
            let metadata = try AES.GCM.seal(
                attributes, using: keys.metadata, authenticating: binding.associatedData("metadata"))
            let wrapped = try AES.GCM.seal(
                keyBytes, using: keys.itemKeyWrap, authenticating: binding.associatedData("item-key"))
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

    /// Opens an item's attributes and hands them to `decode`. For a stored row (`row`, its id),
    /// what `decode` returns is kept with the class key (``OpenedAttributes``), and given again,
    /// without opening, for the same row, binding and sealed bytes while the class stays
    /// unlocked. `decode` must be a function of the bytes alone.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecDecode` when the
    ///   ciphertext was altered or belongs to another row; what `decode` throws.
    public func openAttributes<Decoded: Sendable>(
        _ metadata: Data, binding: ItemBinding, row: Int64?, decode: (Data) throws(KeychainError) -> Decoded
    ) throws(KeychainError) -> Decoded {
        let keys = try classKeys(binding.protectionClass)
        if let row, let known: Decoded = keys.openedAttributes.decoded(row, metadata, binding) { return known }
        let decoded = try decode(try open(metadata, keys.metadata, binding.associatedData("metadata")))
        if let row { keys.openedAttributes.remember(decoded, row, metadata, binding) }
        return decoded
    }

    /// What row `row` decoded to when it was opened under `accessibility`'s class key as it is
    /// open now (``OpenedAttributes``), with the binding it was opened under, when that binding
    /// has the identity, version, class and access-group tag the row's index columns have now;
    /// nil otherwise. Nothing is opened or read but those columns: for a query that needs no
    /// more (persistent references alone). The sealed attributes are not compared, so a row
    /// whose sealed attributes were replaced keeping those columns is answered as it was opened
    /// until something opens it, which then fails.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, as opening would.
    public func openedAttributes<Decoded: Sendable>(
        row: Int64, identity: ColumnBytes, version: Int64, itemClass: String, accessibility: Accessibility,
        accessGroupTag: ColumnBytes
    ) throws(KeychainError) -> (binding: ItemBinding, decoded: Decoded)? {
        try classKeys(accessibility.protectionClass).openedAttributes.decoded(row) { binding in
            binding.version == version && binding.itemClass == itemClass && binding.accessibility == accessibility
                && ColumnBytes(binding.rowIdentity) == identity && ColumnBytes(binding.accessGroupTag) == accessGroupTag
        }
    }

    /// How many items' attributes are kept opened under `protectionClass`'s key as it is open
    /// now (``OpenedAttributes``): none once the class was locked.
    ///
    /// - Throws: `errSecInteractionNotAllowed` while the class is locked.
    public func openedAttributeCount(_ protectionClass: ProtectionClass) throws(KeychainError) -> Int {
        try classKeys(protectionClass).openedAttributes.count
    }

    /// Opens an item's secret: checks the access control against the grants, unwraps the
    /// per-item key with the class key (and the app's password, when the item asks for it),
    /// then the secret.
    ///
    /// - Throws: as ``openAttributes(_:binding:row:decode:)``; errSecInteractionNotAllowed carrying the
    ///   access control when the grants do not satisfy it; errSecAuthFailed for a wrong app
    ///   password or a biometryCurrentSet item whose enrolled set changed.
    public func openSecret(
        _ item: SealedItem, binding: ItemBinding, grants: [AuthenticationGrant] = [],
        applicationPassword: SecretBytes? = nil
    ) throws(KeychainError) -> SecretBytes {
        if let accessControl = binding.accessControl { try authorize(accessControl, grants: grants) }
        var secret = try openWithoutAccessControl(item, binding: binding, applicationPassword: applicationPassword)
        defer { secret.resetBytes(in: 0..<secret.count) }
        return SecretBytes(secret)
    }

    /// Opens an item's secret without checking its access control: for
    /// ``openSecret(_:binding:grants:applicationPassword:)`` once it checked, and for a backup,
    /// which seals the secret again at once. Wipe what it returns.
    func openWithoutAccessControl(
        _ item: SealedItem, binding: ItemBinding, applicationPassword: SecretBytes? = nil
    ) throws(KeychainError) -> Data {
        var keyBytes = try open(
            item.wrappedKey, try classKeys(binding.protectionClass).itemKeyWrap, binding.associatedData("item-key"))
        defer { keyBytes.resetBytes(in: 0..<keyBytes.count) }
        if binding.accessControl?.control.flags.contains(.applicationPassword) == true {
            guard let applicationPassword else { throw applicationPasswordRequired(binding) }
            keyBytes = try openWithApplicationPassword(keyBytes, applicationPassword, binding)
        }
        return try open(item.secret, SymmetricKey(data: keyBytes), binding.associatedData("secret"))
    }

    /// The keyed hash (HMAC-SHA256) of the store's lookup columns, for one request: the index
    /// key is derived once from the AfterFirstUnlock class key, so before the first unlock
    /// nothing can be searched, and without the device secret (and the passcode, when set) the
    /// hashes reveal nothing.
    ///
    /// - Throws: `errSecInteractionNotAllowed` before the first unlock.
    public func indexHasher() throws(KeychainError) -> IndexHasher {
        try classKeys(.afterFirstUnlock).index
    }

    /// The addresses remembered of the Secret Service items opened under `protectionClass`'s
    /// key as it is open now (``RememberedItemAddresses``): none once the class was locked.
    ///
    /// - Throws: as opening an item of that class would: `errSecInteractionNotAllowed` while
    ///   the class is locked.
    public func rememberedAddresses(_ protectionClass: ProtectionClass) throws(KeychainError)
        -> RememberedItemAddresses
    {
        try classKeys(protectionClass).rememberedAddresses
    }

    private func applicationPasswordRequired(_ binding: ItemBinding) -> KeychainError {
        KeychainError(
            status: KeychainError.errSecInteractionNotAllowed.status,
            message:
                "the item is protected by an application password; give it with LAContext.setCredential(_:type: "
                + ".applicationPassword)",
            requiredAuthentication: binding.accessControl?.control)
    }

    private func applicationPasswordKey(
        _ password: SecretBytes, _ binding: ItemBinding
    ) throws(KeychainError) -> SymmetricKey {
        do {
            let stretched = try password.withUnsafeBytes {
                try KDF.Scrypt.deriveKey(
                    from: $0, salt: binding.rowIdentity, outputByteCount: 32, rounds: 1 << 14, blockSize: 8,
                    parallelism: 1, maxMemory: 32 << 20)
            }
            return HKDF<SHA256>.deriveKey(
                inputKeyMaterial: stretched, info: Data("swift-keychain application-password v1".utf8),
                outputByteCount: 32)
        } catch {
            throw KeychainError(.errSecInternalComponent, "the application password key derivation failed")
        }
    }

    private func sealWithApplicationPassword(
        _ keyBytes: Data, _ password: SecretBytes, _ binding: ItemBinding
    ) throws(KeychainError) -> Data {
        guard
            let sealed = try? AES.GCM.seal(
                keyBytes, using: applicationPasswordKey(password, binding),
                authenticating: binding.associatedData("application-password")
            ).combined
        else {
            throw KeychainError(.errSecInternalComponent, "sealing with the application password failed")
        }
        return sealed
    }

    private func openWithApplicationPassword(
        _ sealed: Data, _ password: SecretBytes, _ binding: ItemBinding
    ) throws(KeychainError) -> Data {
        let key = try applicationPasswordKey(password, binding)
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let keyBytes = try? AES.GCM.open(
                box, using: key, authenticating: binding.associatedData("application-password"))
        else { throw KeychainError(.errSecAuthFailed, "the application password is not correct") }
        return keyBytes
    }

    private func open(_ combined: Data, _ key: SymmetricKey, _ associatedData: Data) throws(KeychainError) -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw KeychainError(
                .errSecDecode,
                "an item failed authentication: its database row was altered, damaged or moved from another row")
        }
    }
}
