import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// Reads a backup file (``BackupFile``) as its bytes arrive, trusting none of them until
/// authenticated: the header's HMAC under the password's key, then each chunk's AES-GCM tag.
/// Made by ``Enclave/makeBackupReader(password:)``.
///
/// Every way a file can be wrong is refused: not a backup, another version, parameters below
/// the floor (`errSecDecode`); a wrong password (`errSecAuthFailed`); a chunk altered, moved,
/// dropped or from another file, bytes after the last chunk, a file that stops before it, a
/// record count that does not match (`errSecDecode`). The caller applies nothing before
/// ``finish()`` returns.
public struct BackupReader: Sendable {
    private let password: SecretBytes
    private var keys: BackupKeys?
    private var headerMAC = Data()
    /// File bytes not read yet (a partial header or chunk).
    private var buffered: [UInt8] = []
    /// Opened record-stream bytes not read yet (a partial record); wiped as read.
    private var stream: [UInt8] = []
    private var counter: UInt64 = 0
    private var sawLastChunk = false
    private var records: UInt64 = 0
    private var endCount: UInt64?
    /// The most file bytes one reader takes: what it reads is held until the restore ends, and
    /// a backup of 100,000 items takes 17 MB.
    static let maximumFile = 1 << 30

    private var fileBytes = 0

    /// The keys a test derived once for many readings; nil: derived from the password.
    private let givenKeys: BackupKeys?

    init(password: SecretBytes) {
        self.password = password
        givenKeys = nil
    }

    /// A reader with keys derived already, as a test reads many altered copies of one file.
    init(keys: BackupKeys) {
        password = SecretBytes([])
        givenKeys = keys
    }

    /// Reads `bytes`, the file's next; returns the records they completed.
    ///
    /// - Throws: as the type says; after a throw the reader is of no further use.
    public mutating func read(_ bytes: SecretBytes) throws(KeychainError) -> [BackupRecord] {
        fileBytes += bytes.count
        guard fileBytes <= Self.maximumFile else { throw BackupFile.decodeError("is larger than any backup") }
        bytes.withUnsafeBytes { buffered.append(contentsOf: $0) }
        if keys == nil {
            guard buffered.count >= BackupFile.headerSize else {
                guard buffered.prefix(BackupFile.magic.count).elementsEqual(BackupFile.magic.prefix(buffered.count))
                else { throw BackupFile.decodeError("is not a swift-keychain backup (it does not start as one)") }
                return []
            }
            let headerBytes = Data(buffered.prefix(BackupFile.headerSize))
            let header = try BackupHeader.parse(headerBytes)
            let keys: BackupKeys
            if let givenKeys { keys = givenKeys } else { keys = try BackupKeys(password: password, kdf: header.kdf) }
            headerMAC = try header.authenticate(headerBytes, keys)
            self.keys = keys
            buffered.removeFirst(BackupFile.headerSize)
        }
        return try openChunks()
    }

    private mutating func openChunks() throws(KeychainError) -> [BackupRecord] {
        var completed: [BackupRecord] = []
        while buffered.count >= 4 {
            let length = buffered.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard length >= BackupFile.tagSize, length <= BackupFile.chunkSize + BackupFile.tagSize else {
                throw BackupFile.decodeError("was altered or damaged (a chunk of \(length) bytes)")
            }
            guard buffered.count >= 4 + length else { break }
            guard !sawLastChunk else { throw BackupFile.decodeError("goes on after its last chunk") }
            let chunk = Array(buffered[4..<(4 + length)])
            buffered.removeFirst(4 + length)
            var plaintext = try open(chunk)
            defer { ProcessFiles.wipe(&plaintext) }
            stream.append(contentsOf: plaintext)
            completed.append(contentsOf: try takeRecords())
        }
        return completed
    }

    /// Opens a chunk as the next one, and as the last one when it is not the next of many.
    private mutating func open(_ chunk: [UInt8]) throws(KeychainError) -> [UInt8] {
        guard let keys else { throw BackupFile.decodeError("has no header") }
        let ciphertext = chunk.dropLast(BackupFile.tagSize)
        let tag = chunk.suffix(BackupFile.tagSize)
        for last in [false, true] {
            guard
                let box = try? AES.GCM.SealedBox(
                    nonce: BackupFile.nonce(counter, last: last), ciphertext: ciphertext, tag: tag),
                let opened = try? AES.GCM.open(box, using: keys.payload, authenticating: headerMAC)
            else { continue }
            // A chunk that is not the last is always full.
            guard last || opened.count == BackupFile.chunkSize else { break }
            counter += 1
            sawLastChunk = last
            return Array(opened)
        }
        throw BackupFile.decodeError(
            "was altered or damaged: chunk \(counter) does not authenticate (changed, moved, or from another backup)")
    }

    private mutating func takeRecords() throws(KeychainError) -> [BackupRecord] {
        var records: [BackupRecord] = []
        var position = 0
        while stream.count - position >= 4 {
            let length = stream[position..<(position + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard length <= BackupFile.maximumRecord else {
                throw BackupFile.decodeError("holds a record of \(length) bytes, more than any item")
            }
            guard stream.count - position >= 4 + length else { break }
            var body = Array(stream[(position + 4)..<(position + 4 + length)])
            defer { ProcessFiles.wipe(&body) }
            position += 4 + length
            guard endCount == nil else { throw BackupFile.decodeError("holds records after its end") }
            let record = try BackupRecord.decode(body)
            if case .end(let count) = record {
                guard count == self.records + UInt64(records.count) else {
                    throw BackupFile.decodeError(
                        "counts \(count) items but holds \(self.records + UInt64(records.count))")
                }
                endCount = count
            } else {
                records.append(record)
            }
        }
        let rest = Array(stream[position...])
        ProcessFiles.wipe(&stream)
        stream = rest
        self.records += UInt64(records.count)
        return records
    }

    /// Checks that the file ended where it should: its last chunk read, its end record in it,
    /// nothing after. Returns how many item records it held.
    ///
    /// - Throws: `errSecDecode` for a file that stops early (cut anywhere) or holds more.
    public func finish() throws(KeychainError) -> UInt64 {
        guard keys != nil else { throw BackupFile.decodeError("stops before the end of its header") }
        guard sawLastChunk, buffered.isEmpty else {
            throw BackupFile.decodeError("stops before its end (it was cut short)")
        }
        guard let endCount, stream.isEmpty else { throw BackupFile.decodeError("lacks its end record") }
        return endCount
    }

}
