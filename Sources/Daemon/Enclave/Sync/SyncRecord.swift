import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// One synchronizable item's state as one device last wrote it, as the remote stores it
/// (Docs/Sync.md, "The records"): a clear header, the content sealed and padded to a size
/// bucket, and the writer's signature over both.
///
/// Layout: format `01`, the sync key's epoch (4 bytes), the record's name (16 bytes: a keyed hash
/// of the item's identity), its clock (``SyncTimestamp``, 24 bytes, whose last 16 are the
/// writer's id), the sealed content's length (4 bytes) and the sealed content (AES-256-GCM:
/// nonce, ciphertext, tag; associated data the 45 header bytes), then the writer's ECDSA P-256
/// signature (64 bytes, raw) over everything before it.
///
/// Inside, padded with zeros to a bucket: the content's length (4 bytes), then `01`, the item's
/// class, attributes (as the keychain stores them) and secret, or `02` for a deletion; then the
/// versions of the item its writer lost that are still kept (``Kept``).
public struct SyncRecord: Sendable {
    static let format: UInt8 = 1
    static let headerSize = 1 + 4 + 16 + 24
    static let signatureSize = 64
    /// The sizes a sealed content takes: the smallest that holds it. The remote learns which
    /// bucket, not the size within it.
    static let buckets = [512, 2 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20, 4 << 20]
    /// AES-GCM's nonce and tag.
    private static let sealingOverhead = 12 + 16

    /// What a record says of its item.
    public enum Content: Sendable {
        /// The item as it is: its class (`genp`…), attributes (``AttributeRecordEncoding``) and
        /// secret.
        case item(itemClass: String, attributes: Data, secret: SecretBytes)
        /// The item was deleted.
        case tombstone
    }

    /// A version of the item that lost a conflict, carried by its writer's next record of the
    /// item for ``keptFor`` after the change that beat it (Docs/Sync.md, "Conflicts").
    public struct Kept: Sendable {
        /// When the losing change was made, and by which device.
        public var clock: SyncTimestamp
        /// When the change that beat it was made (milliseconds since 1970).
        public var beatenAt: UInt64
        /// The item's class, attributes and secret, as in ``Content/item(itemClass:attributes:secret:)``.
        public var itemClass: String
        public var attributes: Data
        public var secret: SecretBytes

        /// A kept version.
        public init(clock: SyncTimestamp, beatenAt: UInt64, itemClass: String, attributes: Data, secret: SecretBytes) {
            self.clock = clock
            self.beatenAt = beatenAt
            self.itemClass = itemClass
            self.attributes = attributes
            self.secret = secret
        }
    }

    /// How long a losing version is kept after the change that beat it: 30 days.
    public static let keptFor: UInt64 = 30 * 24 * 3600 * 1000

    /// The sync key's epoch it is sealed under.
    public var epoch: UInt32
    /// 16 bytes.
    public var name: Data
    /// When its change was made, and by which device.
    public var clock: SyncTimestamp
    var sealed: Data
    var signature: Data

    /// The writer's id: the last part of the clock.
    var writer: Data { clock.device }

    private var header: Data {
        var bytes = Data([Self.format])
        withUnsafeBytes(of: epoch.bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(name)
        bytes.append(clock.encoded)
        return bytes
    }

    private var signed: Data {
        var bytes = header
        withUnsafeBytes(of: UInt32(sealed.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(sealed)
        return bytes
    }

    /// The record's bytes, as the remote stores them.
    var encoded: Data { signed + signature }

    /// Seals `content` and the `kept` versions under `key`, padded to its bucket, and signs the
    /// record with `signer`.
    ///
    /// - Throws: `errSecDataTooLarge` for content larger than the largest bucket.
    static func make(
        _ content: Content, kept: [Kept] = [], epoch: UInt32, name: Data, clock: SyncTimestamp, key: SymmetricKey,
        signer: P256.Signing.PrivateKey
    ) throws(KeychainError) -> SyncRecord {
        var writer = WireWriter()
        switch content {
        case .item(let itemClass, let attributes, let secret):
            writer.u8(1)
            writer.string(itemClass)
            writer.data(attributes)
            writer.secret(secret)
        case .tombstone:
            writer.u8(2)
        }
        writer.array(kept) { writer, version in
            writer.data(version.clock.encoded)
            writer.u64(version.beatenAt)
            writer.string(version.itemClass)
            writer.data(version.attributes)
            writer.secret(version.secret)
        }
        var body = writer.finish()
        defer { writer.wipe(); ProcessFiles.wipe(&body) }
        guard let bucket = buckets.first(where: { $0 - sealingOverhead >= 4 + body.count }) else {
            throw KeychainError(.errSecDataTooLarge, "an item of \(body.count) bytes is larger than a record holds")
        }
        var plaintext = [UInt8](repeating: 0, count: bucket - sealingOverhead)
        defer { ProcessFiles.wipe(&plaintext) }
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { plaintext.replaceSubrange(0..<4, with: $0) }
        plaintext.replaceSubrange(4..<(4 + body.count), with: body)
        var record = SyncRecord(epoch: epoch, name: name, clock: clock, sealed: Data(), signature: Data())
        do {
            guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: record.header).combined
            else { throw KeychainError.errSecInternalComponent }
            record.sealed = combined
            record.signature = try signer.signature(for: record.signed).rawRepresentation
        } catch {
            throw KeychainError(.errSecInternalComponent, "sealing a sync record failed: \(error)")
        }
        return record
    }

    /// Reads a record's structure; nothing in it is trusted until ``verify(signer:)`` and
    /// ``open(key:)``.
    ///
    /// - Throws: `errSecDecode` for anything that is not a record of this format.
    public static func decode(_ bytes: Data) throws(KeychainError) -> SyncRecord {
        let bytes = Data(bytes)
        let malformed = KeychainError(.errSecDecode, "a sync record on the remote is malformed")
        guard bytes.count > headerSize + 4 + signatureSize, bytes[0] == format,
            let clock = SyncTimestamp(bytes[21..<45])
        else { throw malformed }
        let epoch = bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let length = bytes[45..<49].reduce(0) { $0 << 8 | Int($1) }
        guard buckets.contains(length), bytes.count == headerSize + 4 + length + signatureSize else { throw malformed }
        return SyncRecord(
            epoch: epoch, name: bytes[5..<21], clock: clock, sealed: bytes[49..<(49 + length)],
            signature: bytes.suffix(signatureSize))
    }

    /// Checks the writer's signature.
    ///
    /// - Throws: `errSecDecode` when `signer` did not sign this record as it is.
    func verify(signer: P256.Signing.PublicKey) throws(KeychainError) {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            signer.isValidSignature(signature, for: signed)
        else {
            throw KeychainError(
                .errSecDecode, "a sync record's signature is not its writer's: it was altered or forged on the remote")
        }
    }

    /// The content and the kept versions, opened with `key`.
    ///
    /// - Throws: `errSecDecode` when it does not open (another key, another record's content,
    ///   an altered header) or is malformed.
    func open(key: SymmetricKey) throws(KeychainError) -> (content: Content, kept: [Kept]) {
        let refused = KeychainError(
            .errSecDecode, "a sync record does not open: it was altered, moved or sealed under another key")
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let opened = try? AES.GCM.open(box, using: key, authenticating: header)
        else { throw refused }
        var plaintext = Array(opened)
        defer { ProcessFiles.wipe(&plaintext) }
        let length = plaintext.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length <= plaintext.count - 4, plaintext[(4 + length)...].allSatisfy({ $0 == 0 }) else { throw refused }
        var reader = WireReader(Array(plaintext[4..<(4 + length)]))
        do throws(WireError) {
            let content: Content
            switch try reader.u8() {
            case 1:
                content = .item(
                    itemClass: try reader.string(max: 64), attributes: try reader.data(max: Self.buckets.last ?? 0),
                    secret: try reader.secret(max: KeychainLimits.maximumSecretSize))
            case 2: content = .tombstone
            default: throw WireError("an unknown kind of content")
            }
            let kept = try reader.array(max: 64) { (reader: inout WireReader) throws(WireError) -> Kept in
                guard let clock = SyncTimestamp(try reader.data(max: 24)) else { throw WireError("a kept clock") }
                return Kept(
                    clock: clock, beatenAt: try reader.u64(), itemClass: try reader.string(max: 64),
                    attributes: try reader.data(max: Self.buckets.last ?? 0),
                    secret: try reader.secret(max: KeychainLimits.maximumSecretSize))
            }
            try reader.finish()
            return (content, kept)
        } catch {
            throw refused
        }
    }
}
