import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport
import Synchronization

/// This device's keys for its circle, opened inside the Enclave for one sync (Docs/Sync.md,
/// "The circle of devices"): its identity key (P-256, made in the Enclave and never handed out,
/// which signs what this device writes and unwraps the sync keys wrapped to it) and the sync
/// key of every epoch it holds. Nothing here hands out a key: callers get records, lists,
/// heads and wraps.
///
/// One P-256 key both signs (ECDSA) and unwraps (ECDH), so that a device is one public key in
/// the list; the two uses never share an input (a signature covers a labelled message, an
/// agreement an ephemeral public key).
public final class SyncCircleKeys: Sendable {
    private static let recordLabel = Data("swift-keychain sync records v1".utf8)
    private static let nameLabel = Data("swift-keychain sync names v1".utf8)

    private let signing: P256.Signing.PrivateKey
    private let agreement: P256.KeyAgreement.PrivateKey
    private let epochKeys = Mutex<[UInt32: SymmetricKey]>([:])
    private let derivedKeys = Mutex<[DerivedKeyName: SymmetricKey]>([:])
    /// This device's identity public key (X9.63).
    public let publicKey: Data
    /// This device's id: the first 16 bytes of SHA-256 of its public key.
    public let deviceID: Data

    init(raw: Data) throws(KeychainError) {
        do {
            signing = try P256.Signing.PrivateKey(rawRepresentation: raw)
            agreement = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
        } catch {
            throw KeychainError(.errSecDecode, "the sync identity key does not open")
        }
        publicKey = signing.publicKey.x963Representation
        deviceID = SyncDeviceList.Member(name: "", publicKey: publicKey).id
    }

    /// The epochs whose sync key this device holds.
    public var epochs: Set<UInt32> { Set(epochKeys.withLock { $0.keys }) }

    /// Unwraps the sync key of `epoch` wrapped to this device, and holds it.
    ///
    /// - Throws: `errSecDecode` when it is not wrapped to this device for `epoch`, or was altered.
    public func takeWrappedKey(_ wrapped: Data, epoch: UInt32) throws(KeychainError) {
        let key = try SyncKeyWrap.unwrap(wrapped, epoch: epoch, with: agreement)
        hold(key, epoch: epoch)
    }

    /// Makes a new sync key for `epoch`, and holds it.
    public func startEpoch(_ epoch: UInt32) {
        hold(SymmetricKey(size: .bits256), epoch: epoch)
    }

    /// The sync key of `epoch` wrapped to the device whose identity key is `member` (X9.63).
    ///
    /// - Throws: `errSecParam` for an epoch this device does not hold or a key that is not P-256.
    public func wrapKey(epoch: UInt32, to member: Data) throws(KeychainError) -> Data {
        guard let key = epochKeys.withLock({ $0[epoch] }) else {
            throw KeychainError(.errSecParam, "this device holds no sync key of epoch \(epoch)")
        }
        guard let memberKey = try? P256.KeyAgreement.PublicKey(x963Representation: member) else {
            throw KeychainError(.errSecParam, "a member's key is not a P-256 public key")
        }
        return try SyncKeyWrap.wrap(key, epoch: epoch, to: memberKey)
    }

    /// Holds `key` as `epoch`'s, forgetting what was derived from one held before.
    private func hold(_ key: SymmetricKey, epoch: UInt32) {
        derivedKeys.withLock { $0 = $0.filter { $0.key.epoch != epoch } }
        epochKeys.withLock { $0[epoch] = key }
    }

    /// The key derived for `label` from `epoch`'s sync key: once per sync, not once per record.
    private func key(_ epoch: UInt32, _ label: Data) throws(KeychainError) -> SymmetricKey {
        let name = DerivedKeyName(epoch: epoch, label: label)
        if let derived = derivedKeys.withLock({ $0[name] }) { return derived }
        guard let key = epochKeys.withLock({ $0[epoch] }) else {
            throw KeychainError(
                .errSecDecode, "a sync record is of epoch \(epoch), whose key this device does not hold")
        }
        let derived = HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: label, outputByteCount: 32)
        derivedKeys.withLock { $0[name] = derived }
        return derived
    }

    private struct DerivedKeyName: Hashable {
        var epoch: UInt32
        var label: Data
    }

    /// A record's name: HMAC-SHA256 (first 16 bytes) of the item's identity (its class, access
    /// group and primary key) under the circle's name key, derived from the first epoch's key so
    /// that an item keeps its name for the circle's life. A device removed later keeps that key:
    /// it could test a guessed identity against names written after it left, and learns nothing
    /// else.
    public func recordName(_ itemIdentity: Data) throws(KeychainError) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: itemIdentity, using: try key(1, Self.nameLabel)).prefix(16))
    }

    /// A record of `content`, with the versions `kept`, sealed under `epoch`'s key and signed by
    /// this device. Kept versions that would not fit the largest bucket are left out, the
    /// oldest first.
    public func seal(
        _ content: SyncRecord.Content, kept: [SyncRecord.Kept] = [], name: Data, clock: SyncTimestamp,
        epoch: UInt32
    ) throws(KeychainError) -> Data {
        let key = try key(epoch, Self.recordLabel)
        var kept = kept.sorted { $0.clock > $1.clock }
        while true {
            do throws(KeychainError) {
                return try SyncRecord.make(
                    content, kept: kept, epoch: epoch, name: name, clock: clock, key: key, signer: signing
                ).encoded
            } catch  where error.status == KeychainError.errSecDataTooLarge.status && !kept.isEmpty {
                kept.removeLast()
            }
        }
    }

    /// Opens a record the remote holds under `name`, written by the device whose key is
    /// `writer`: its clock, its content and the versions its writer lost that it carries.
    ///
    /// - Throws: `errSecDecode` for a record that is malformed, not `writer`'s, held under another
    ///   name, of an epoch this device does not hold, or altered.
    public func open(
        _ bytes: Data, name: Data, writer: Data
    ) throws(KeychainError) -> (
        clock: SyncTimestamp, content: SyncRecord.Content, kept: [SyncRecord.Kept]
    ) {
        let record = try SyncRecord.decode(bytes)
        guard let writerKey = try? P256.Signing.PublicKey(x963Representation: writer),
            record.writer == SyncDeviceList.Member(name: "", publicKey: writer).id
        else {
            throw KeychainError(.errSecDecode, "a sync record's clock names another writer than the device it is under")
        }
        guard record.name == name else {
            throw KeychainError(.errSecDecode, "a sync record was moved to another name on the remote")
        }
        try record.verify(signer: writerKey)
        let opened = try record.open(key: try key(record.epoch, Self.recordLabel))
        return (record.clock, opened.content, opened.kept)
    }

    /// The first device list of a new circle: this device alone, named `name`.
    public func firstList(name: String) throws(KeychainError) -> SyncDeviceList {
        try SyncDeviceList.first(name: name, identity: signing)
    }

    /// The list after `list`, with `members` and `epoch`, signed by this device.
    public func nextList(
        after list: SyncDeviceList, members: [SyncDeviceList.Member], epoch: UInt32
    ) throws(KeychainError) -> SyncDeviceList {
        try list.next(members: members, epoch: epoch, signedBy: signing)
    }

    /// This device's signed answer, with `nonce`, to a machine's request to join.
    public func answer(_ request: SyncJoin.Request, nonce: Data) throws(KeychainError) -> SyncJoin.Answer {
        try SyncJoin.Answer.make(to: request, nonce: nonce, identity: signing)
    }

    /// This device's head: `sequence` and the digest of its records, signed.
    public func head(sequence: UInt64, digest: Data) throws(KeychainError) -> SyncHead {
        var head = SyncHead(device: deviceID, sequence: sequence, digest: digest, signature: Data())
        do {
            head.signature = try signing.signature(for: head.body).rawRepresentation
        } catch {
            throw KeychainError(.errSecInternalComponent, "signing the head failed")
        }
        return head
    }
}
