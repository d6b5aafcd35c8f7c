import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// Writes a backup file (``BackupFile``): the header first, then records, sealed a chunk at a
/// time as they fill. Made by ``Enclave/makeBackupWriter(password:)``, which holds the keys.
public struct BackupWriter: Sendable {
    /// The file's first bytes.
    public let header: Data
    private let keys: BackupKeys
    private let headerMAC: Data
    /// Record-stream bytes not sealed yet (less than a chunk between calls); wiped as sealed.
    private var pending: [UInt8] = []
    private var counter: UInt64 = 0
    private var records: UInt64 = 0

    init(keys: BackupKeys, header: BackupHeader) {
        self.keys = keys
        self.header = header.encoded(keys)
        headerMAC = self.header.suffix(32)
    }

    /// Adds a record to the stream; returns the chunks it filled, sealed (often none).
    public mutating func append(_ record: BackupRecord) throws(KeychainError) -> Data {
        var body = record.encoded()
        defer { ProcessFiles.wipe(&body) }
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { pending.append(contentsOf: $0) }
        pending.append(contentsOf: body)
        records += 1
        var sealed = Data()
        while pending.count > BackupFile.chunkSize {
            sealed.append(try seal(BackupFile.chunkSize, last: false))
        }
        return sealed
    }

    /// Ends the stream with its end record and seals the last chunk.
    public mutating func finish() throws(KeychainError) -> Data {
        var sealed = try append(.end(count: records))
        sealed.append(try seal(pending.count, last: true))
        return sealed
    }

    private mutating func seal(_ count: Int, last: Bool) throws(KeychainError) -> Data {
        var plaintext = Array(pending.prefix(count))
        defer { ProcessFiles.wipe(&plaintext) }
        let rest = Array(pending.dropFirst(count))
        ProcessFiles.wipe(&pending)
        pending = rest
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(
                plaintext, using: keys.payload, nonce: BackupFile.nonce(counter, last: last),
                authenticating: headerMAC)
        } catch {
            throw KeychainError(.errSecInternalComponent, "sealing a chunk of the backup failed: \(error)")
        }
        counter += 1
        var chunk = Data()
        withUnsafeBytes(of: UInt32(box.ciphertext.count + BackupFile.tagSize).bigEndian) {
            chunk.append(contentsOf: $0)
        }
        chunk.append(box.ciphertext)
        chunk.append(box.tag)
        return chunk
    }
}
