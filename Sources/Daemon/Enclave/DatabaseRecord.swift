import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The Enclave's record of the database it belongs with (file `database-state`): the keychain
/// identity stamped into `keychain.db` and the highest commit generation known to be durable
/// there. The database's own generation only grows, and is committed before it is recorded
/// here, so a database whose generation is below the record lost committed transactions (a
/// missing or truncated WAL, an older copy) and is refused.
///
/// Two fixed-size slots, written in place in turn: a torn write damages only the slot being
/// written, and the other still holds an earlier, smaller generation. Each slot is
/// authenticated with a device-derived key. The first record of a keychain is flushed to disk;
/// later ones are left to the page cache: the whole file (256 bytes) lies in one disk sector,
/// which the disk writes whole, and a record that did not reach the disk before a power cut
/// only lags behind the database, which is the safe direction. That keeps an `fdatasync`
/// (about 350 µs here) off every commit.
struct DatabaseRecord: Equatable, Sendable {
    static let fileName = "database-state"
    static let slotSize = 128
    private static let maximumIDLength = 64

    var keychainID: String
    var generation: UInt64

    private func slot(_ authenticator: Authenticator) -> Data {
        var bytes = Data(capacity: Self.slotSize)
        withUnsafeBytes(of: generation.bigEndian) { bytes.append(contentsOf: $0) }
        let id = keychainID.utf8.prefix(Self.maximumIDLength)
        bytes.append(UInt8(id.count))
        bytes.append(contentsOf: id)
        bytes.append(contentsOf: authenticator.code(bytes))
        bytes.append(contentsOf: repeatElement(0, count: Self.slotSize - bytes.count))
        return bytes
    }

    /// The HMAC-SHA256 that authenticates the records, under a key derived from the device
    /// secret: keyed once per Enclave, and each slot's code starts from a copy of the keyed
    /// state. Every commit records, and keying the HMAC anew was a third of recording (15k of
    /// 45k instructions).
    struct Authenticator: Sendable {
        private let keyed: HMAC<SHA256>

        init(deviceKey: SymmetricKey) {
            keyed = HMAC<SHA256>(key: AuthenticatedState.key(for: DatabaseRecord.fileName, deviceKey: deviceKey))
        }

        fileprivate func code(_ body: Data) -> HashedAuthenticationCode<SHA256> {
            var hmac = keyed
            hmac.update(data: DatabaseRecord.label)
            hmac.update(data: body)
            return hmac.finalize()
        }
    }

    private static let label = Data("swift-keychain database-state v1".utf8)

    private static func parse(_ bytes: Data, _ authenticator: Authenticator) -> DatabaseRecord? {
        let bytes = Data(bytes)
        guard bytes.count == slotSize else { return nil }
        let idLength = Int(bytes[8])
        guard idLength <= maximumIDLength else { return nil }
        let body = bytes.prefix(9 + idLength)
        let mac = bytes[(9 + idLength)..<(9 + idLength + 32)]
        // HashedAuthenticationCode's comparison with bytes takes the same time wherever they differ.
        guard authenticator.code(body) == mac else { return nil }
        let generation = body.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return DatabaseRecord(keychainID: String(decoding: body.dropFirst(9), as: UTF8.self), generation: generation)
    }

    /// The record, or nil when there is none.
    ///
    /// - Throws: `errSecDecode` when the file exists but no slot is authentic.
    static func load(_ files: KeychainDirectory, authenticator: Authenticator) throws(KeychainError) -> DatabaseRecord?
    {
        guard let data = try files.read(fileName) else { return nil }
        return try newest(in: data, files: files, authenticator: authenticator)
    }

    private static func newest(
        in data: Data, files: KeychainDirectory, authenticator: Authenticator
    ) throws(KeychainError) -> DatabaseRecord {
        let slots = stride(from: 0, to: min(data.count, 2 * slotSize), by: slotSize).compactMap { offset in
            data.count >= offset + slotSize ? parse(data[offset..<(offset + slotSize)], authenticator) : nil
        }
        guard let newest = slots.max(by: { $0.generation < $1.generation }) else {
            throw KeychainError(
                .errSecDecode,
                "\(files.path(fileName)) was altered or damaged: no record in it is authentic; restore it from a copy")
        }
        return newest
    }

    /// Records `self`, in the slot of its generation's parity (the other slot keeps the
    /// previous generation). No read first: the database commits before it records, so a
    /// record can lag behind the database but never lead it, and two processes recording out
    /// of order only make it lag (which weakens detection a little and never refuses a good
    /// database). Writers take the file's `flock`, so at most one slot is ever being written.
    /// With `replacing`, writes both slots (a new or erased keychain: nothing of the previous
    /// one remains).
    func save(_ files: KeychainDirectory, authenticator: Authenticator, replacing: Bool = false) throws(KeychainError) {
        var bytes = slot(authenticator)
        if replacing { bytes.append(slot(authenticator)) }
        let offset = replacing ? 0 : Int(generation % 2) * Self.slotSize
        try files.writeInPlace(bytes, at: offset, to: Self.fileName, durable: replacing)
    }
}
