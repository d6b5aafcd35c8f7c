import Foundation
import KeychainProtocol

/// One record of a backup's stream (``BackupFile``).
public enum BackupRecord: Sendable {
    /// An item that may go to any device, in the clear inside the backup's encryption (kind 1).
    case item(BackupItem)
    /// A device-only item, sealed again under this device's backup key (kind 2): only the device
    /// that made the backup opens it (``Enclave/openSealedForThisDevice(_:)``).
    case sealedToDevice(Data)
    /// The end of the stream: how many records came before it (kind 0).
    case end(count: UInt64)

    /// The record's body (without its length).
    func encoded() -> [UInt8] {
        var writer = WireWriter()
        switch self {
        case .end(let count):
            writer.u8(0)
            writer.u64(count)
        case .item(let item):
            item.write(to: &writer)
        case .sealedToDevice(let sealed):
            writer.u8(2)
            writer.data(sealed)
        }
        return writer.finish()
    }

    /// Reads a record's body.
    ///
    /// - Throws: `errSecDecode` for an unknown kind or a malformed body.
    static func decode(_ body: [UInt8]) throws(KeychainError) -> BackupRecord {
        var reader = WireReader(body)
        do throws(WireError) {
            let record: BackupRecord
            switch try reader.u8() {
            case 0: record = .end(count: try reader.u64())
            case 1: record = .item(try BackupItem.read(&reader))
            case 2: record = .sealedToDevice(try reader.data(max: BackupFile.maximumRecord))
            case let kind: throw WireError("a record of unknown kind \(kind)")
            }
            try reader.finish()
            return record
        } catch {
            throw BackupFile.decodeError("holds a malformed record (\(error.reason))")
        }
    }
}

/// An item as a backup carries it: its class, its sealed attributes in their stored form
/// (``AttributeRecordEncoding``, dates and access group among them), its secret, and its stored
/// access control.
public struct BackupItem: Sendable {
    /// The item class's raw value (`genp`, …).
    public var itemClass: String
    /// The attributes, as ``AttributeRecordEncoding`` lays them out.
    public var attributes: Data
    /// The secret.
    public var secret: SecretBytes
    /// The access control, as `StoredAccessControl.encoded()` writes it; device-only items only.
    public var accessControl: Data?

    /// Creates an item.
    public init(itemClass: String, attributes: Data, secret: SecretBytes, accessControl: Data?) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.accessControl = accessControl
    }

    func write(to writer: inout WireWriter) {
        writer.u8(1)
        writer.string(itemClass)
        writer.data(attributes)
        writer.secret(secret)
        writer.optional(accessControl) { $0.data($1) }
    }

    /// Reads an item after its kind byte.
    static func read(_ reader: inout WireReader) throws(WireError) -> BackupItem {
        BackupItem(
            itemClass: try reader.string(max: 64), attributes: try reader.data(max: BackupFile.maximumRecord),
            secret: try reader.secret(max: KeychainLimits.maximumSecretSize),
            accessControl: try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.data(max: 64 << 10)
            })
    }

    /// The item's body on its own (kind byte first), as a device-only record seals it.
    func encoded() -> [UInt8] {
        var writer = WireWriter()
        write(to: &writer)
        return writer.finish()
    }

    /// Reads a body that ``encoded()`` wrote; nil when it is not one.
    static func decode(_ body: [UInt8]) -> BackupItem? {
        var reader = WireReader(body)
        guard (try? reader.u8()) == 1, let item = try? read(&reader), (try? reader.finish()) != nil else { return nil }
        return item
    }
}
