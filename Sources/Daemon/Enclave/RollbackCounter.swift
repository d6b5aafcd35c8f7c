import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport
import Synchronization

/// A monotonic counter in the TPM's NV memory that follows the database's generation, so that
/// a complete older copy of the keychain's files put back is refused: the files can be copied
/// and put back, the counter cannot be set back, even by root.
///
/// The counter starts wherever the TPM starts new counters; the offset between it and the
/// generation is fixed when the database is created and kept in `device-secret.tpm`. After every commit
/// the counter is brought up to the new generation (one NV increment a commit). When the
/// keychain opens: a counter ahead of the database means the database is older than the last
/// commit the TPM saw (refused, `errSecDecode`); a counter behind it (increments that did not
/// happen: a crash, a busy TPM) is brought up.
///
/// Its increments and reads are authorized by a value derived from the device secret, so that
/// no other program with access to the TPM can move it.
final class RollbackCounter: Sendable {
    let tpm: TrustedPlatformModule
    let index: UInt32
    private let auth: SymmetricKey
    private let files: KeychainDirectory
    private let deviceKey: SymmetricKey
    /// The sealed file as last written, and the counter's value as last known here.
    private let state: Mutex<(sealed: SealedDeviceSecret, value: UInt64?)>
    /// The most increments an open brings the counter up by; more is not a lag but a mismatch.
    static let maximumCatchUp: UInt64 = 100_000

    init(tpm: TrustedPlatformModule, sealed: SealedDeviceSecret, files: KeychainDirectory, deviceKey: SymmetricKey) {
        self.tpm = tpm
        index = sealed.counterIndex
        auth = Self.auth(deviceKey)
        self.files = files
        self.deviceKey = deviceKey
        state = Mutex((sealed, nil))
    }

    static func auth(_ deviceKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain tpm counter auth v1".utf8), outputByteCount: 32)
    }

    /// Defines a new counter at a free NV index of the owner range (0x01000000–0x013FFFFF).
    static func define(_ tpm: TrustedPlatformModule, deviceKey: SymmetricKey) throws(KeychainError) -> UInt32 {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<16 {
            let index = 0x0100_0000 | UInt32.random(in: 0...0x3F_FFFF, using: &random)
            if try tpm.defineCounter(index, auth: auth(deviceKey)) { return index }
        }
        throw KeychainError(.errSecNotAvailable, "no free NV index for the keychain's counter in the TPM (\(tpm.tcti))")
    }

    /// The counter's value now.
    func value() throws(KeychainError) -> UInt64 {
        try tpm.readCounter(index, auth: auth)
    }

    /// Ties the counter to a database just created at `generation`: the offset between them is
    /// fixed here, and kept in `device-secret.tpm`. A new keychain in a directory whose device
    /// secret stayed (an erase of an unopenable keychain keeps it) starts over here too.
    func start(databaseGeneration generation: UInt64) throws(KeychainError) {
        let counter = try value()
        var sealed = state.withLock { $0.sealed }
        sealed.counterOffset = Int64(bitPattern: counter &- generation)
        try files.writeAtomically(sealed.encoded(deviceKey), to: SealedDeviceSecret.fileName)
        state.withLock { $0 = (sealed, counter) }
    }

    /// Checks the database at `generation` against the counter when the keychain opens.
    ///
    /// - Throws: `errSecDecode` when the counter records a later generation: an older copy of
    ///   the files was put back.
    func check(databaseGeneration generation: UInt64, database: String) throws(KeychainError) {
        guard let offset = state.withLock({ $0.sealed.counterOffset }) else {
            return try start(databaseGeneration: generation)
        }
        let counter = try value()
        let recorded = counter &- UInt64(bitPattern: offset)
        guard recorded <= generation else {
            throw KeychainError(
                .errSecDecode,
                "\(database) is an older copy: it is at generation \(generation), but the TPM's counter (NV index "
                    + "0x\(String(index, radix: 16)) in \(tpm.tcti)) records that generation \(recorded) was "
                    + "committed. A complete older copy of the keychain's files was put back. Nothing was changed. "
                    + "Put back the files as they were last, or restore a backup (Docs/Backup.md).")
        }
        guard generation - recorded <= Self.maximumCatchUp else {
            throw KeychainError(
                .errSecDecode,
                "\(database) is at generation \(generation), far ahead of what the TPM's counter records "
                    + "(\(recorded)): the counter is not this keychain's. Nothing was changed.")
        }
        state.withLock { $0.value = counter }
        record(generation)
    }

    /// Brings the counter up to `generation` after a commit, one increment at a time, one
    /// commit at a time. A failed increment only leaves the counter behind, which the next open
    /// brings up: the commit stands. After a failure the counter is read again rather than
    /// assumed, so that an increment that happened but reported a failure is never repeated.
    func record(_ generation: UInt64) {
        state.withLock { state in
            guard let offset = state.sealed.counterOffset else { return }
            let target = generation &+ UInt64(bitPattern: offset)
            guard var value = state.value ?? (try? tpm.readCounter(index, auth: auth)) else { return }
            while value < target {
                guard (try? tpm.incrementCounter(index, auth: auth)) != nil else {
                    state.value = nil
                    return
                }
                value += 1
            }
            state.value = value
        }
    }
}
