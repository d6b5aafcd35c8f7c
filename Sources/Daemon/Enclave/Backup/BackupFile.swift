import Crypto
import Foundation
import KeychainProtocol

/// The backup file, version 1; Docs/Backup.md has the layout as a table.
///
/// A header, then the records in a stream of sealed chunks, as age seals its payload:
///
/// - The header (63 bytes): the magic `\x89KCBKUP\n`, the version, the scrypt parameters and
///   salt of the backup password, and an HMAC-SHA256 of all that under a key derived from the
///   password. A wrong password fails there
///   (`errSecAuthFailed`), before any chunk is read.
/// - The chunks: each a 32-bit length and an AES-256-GCM ciphertext of at most 64 KiB of the
///   record stream, under the payload key, with the nonce the chunk's number and a last-chunk
///   flag (the STREAM construction), and the header's HMAC as associated data. A chunk moved,
///   dropped, repeated or taken from another backup fails to open; a file cut at a chunk
///   boundary lacks its last chunk; both are `errSecDecode`.
/// - The records: each a 32-bit length and a body; the stream ends with an end record that
///   counts the items before it.
public enum BackupFile {
    static let magic: [UInt8] = [0x89, 0x4B, 0x43, 0x42, 0x4B, 0x55, 0x50, 0x0A]
    static let version: UInt8 = 1
    /// magic, version, log2 N, r, p, salt, HMAC.
    static let headerSize = 8 + 1 + 1 + 4 + 1 + 16 + 32
    /// The most record-stream bytes one chunk seals.
    static let chunkSize = 64 << 10
    static let tagSize = 16
    /// The largest record: an item's 1 MiB secret and 1 MiB of attributes fit with room.
    static let maximumRecord = 4 << 20

    /// What a backup's password derivation may ask for: exactly what the writer uses. A backup
    /// leaves the device, so nothing but the password protects it: the floor is four times the
    /// passcode's (scrypt N = 2^17, r = 8: 128 MiB and about 0.4 s a guess on a 2-core machine of
    /// 2026), and a file asking for less is refused as a downgrade. The ceiling is the same
    /// 128 MiB (so p = 1): the derivation runs before anything in the file can be authenticated,
    /// and a 63-byte header asking for N = 2^20 made four parallel restores take 4 GiB.
    public static let limits = PasscodeKDF.Limits(minimumLogN: 17, minimumBlockSize: 8, maximumMemory: 128 << 20)

    /// The parameters of a new backup: the floor, with a fresh salt.
    public static func newKDF() -> PasscodeKDF {
        PasscodeKDF(logN: limits.minimumLogN, blockSize: limits.minimumBlockSize)
    }

    /// The nonce of chunk `counter`: 3 zero bytes, the counter (64 bits), and 1 for the last
    /// chunk or 0.
    static func nonce(_ counter: UInt64, last: Bool) -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 3)
        withUnsafeBytes(of: counter.bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(last ? 1 : 0)
        // 12 bytes: the one size AES.GCM.Nonce refuses nothing of.
        return try! AES.GCM.Nonce(data: bytes)
    }

    static func decodeError(_ what: String) -> KeychainError {
        KeychainError(.errSecDecode, "the backup file \(what); nothing was restored")
    }
}

/// The keys of one backup, derived from its password: one authenticates the header, one seals
/// the chunks.
struct BackupKeys: Sendable {
    let header: SymmetricKey
    let payload: SymmetricKey

    /// Stretches `password` with `kdf` (scrypt), then derives both keys with HKDF.
    init(password: SecretBytes, kdf: PasscodeKDF) throws(KeychainError) {
        let stretched = try kdf.scrypt(password)
        header = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: stretched, salt: kdf.salt, info: Data("swift-keychain backup v1 header".utf8),
            outputByteCount: 32)
        payload = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: stretched, salt: kdf.salt, info: Data("swift-keychain backup v1 payload".utf8),
            outputByteCount: 32)
    }
}

/// A backup's header: the password's parameters.
struct BackupHeader: Sendable {
    var kdf: PasscodeKDF

    /// The header's bytes, its HMAC last.
    func encoded(_ keys: BackupKeys) -> Data {
        var bytes = body()
        bytes.append(contentsOf: HMAC<SHA256>.authenticationCode(for: bytes, using: keys.header))
        return bytes
    }

    private func body() -> Data {
        var writer = WireWriter()
        for byte in BackupFile.magic { writer.u8(byte) }
        writer.u8(BackupFile.version)
        writer.u8(UInt8(kdf.logN))
        writer.u32(UInt32(kdf.blockSize))
        writer.u8(UInt8(kdf.parallelism))
        var bytes = Data(writer.finish())
        bytes.append(kdf.salt)
        return bytes
    }

    /// Reads the header's fields from the first ``BackupFile/headerSize`` bytes, and checks the
    /// parameters against ``BackupFile/limits`` before any derivation.
    ///
    /// - Throws: `errSecDecode` for a file that is not a backup, of another version, or that
    ///   asks for parameters outside the limits.
    static func parse(_ bytes: Data) throws(KeychainError) -> BackupHeader {
        let bytes = Data(bytes)
        guard bytes.count >= BackupFile.headerSize, Array(bytes.prefix(8)) == BackupFile.magic else {
            throw BackupFile.decodeError("is not a swift-keychain backup (it does not start as one)")
        }
        guard bytes[8] == BackupFile.version else {
            throw BackupFile.decodeError(
                "is of version \(bytes[8]); this keychain reads version \(BackupFile.version)")
        }
        let blockSize = bytes[10..<14].reduce(0) { $0 << 8 | Int($1) }
        var kdf = PasscodeKDF(logN: Int(bytes[9]), blockSize: blockSize, parallelism: Int(bytes[14]))
        kdf.salt = bytes[15..<31]
        let header = BackupHeader(kdf: kdf)
        do {
            try kdf.validate(BackupFile.limits)
        } catch {
            throw BackupFile.decodeError(
                "asks for password parameters outside the accepted range (scrypt N=2^\(kdf.logN), r=\(blockSize), "
                    + "p=\(kdf.parallelism); a backup is written with N=2^\(BackupFile.limits.minimumLogN), r="
                    + "\(BackupFile.limits.minimumBlockSize), p=1): it was altered")
        }
        return header
    }

    /// Checks the header's HMAC under `keys`.
    ///
    /// - Throws: `errSecAuthFailed` when it does not match: the password is wrong (or the header
    ///   was altered, which no key can tell apart).
    func authenticate(_ bytes: Data, _ keys: BackupKeys) throws(KeychainError) -> Data {
        let bytes = Data(bytes)
        let mac = bytes[(BackupFile.headerSize - 32)..<BackupFile.headerSize]
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: body(), using: keys.header) else {
            throw KeychainError(
                .errSecAuthFailed,
                "the backup password is not correct (or the file's header was altered); nothing was restored")
        }
        return Data(mac)
    }
}
