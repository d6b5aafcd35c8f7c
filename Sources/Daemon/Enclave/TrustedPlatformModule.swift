import CKeychainTPM
import Crypto
import Foundation
import KeychainProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TPM 2.0, through tpm2-tss's ESAPI (``CKeychainTPM``, loaded at run time): it seals the
/// device secret so that it opens on this TPM only, and keeps monotonic counters in its NV
/// memory that nobody, root included, can set back.
///
/// One connection, used by one request at a time; keychaind opens one and shares it between
/// the keychains it serves.
public final class TrustedPlatformModule: Sendable {
    /// What the TPM was opened by: a TCTI configuration (`device:/dev/tpmrm0`,
    /// `swtpm:host=127.0.0.1,port=2321`).
    public let tcti: String
    /// The ESAPI connection; used only under ``inUse``.
    private nonisolated(unsafe) let connection: OpaquePointer
    /// Held while the connection is in use: ESAPI contexts are not thread-safe.
    private let inUse = Mutex(())

    /// The kernel's resource manager: the TPM a machine's own keychaind uses.
    public static let deviceTCTI = "device:/dev/tpmrm0"

    /// Opens the TPM `tcti` names.
    ///
    /// - Throws: `errSecNotAvailable` when it cannot be opened (no such device, no permission,
    ///   tpm2-tss not installed), saying why.
    public init(tcti: String) throws(KeychainError) {
        var message = [CChar](repeating: 0, count: Int(KC_TPM_MESSAGE))
        guard let opened = kc_tpm_open(tcti, &message) else {
            throw KeychainError(
                .errSecNotAvailable, "the TPM \(tcti) cannot be opened: \(Self.text(message))")
        }
        self.tcti = tcti
        connection = opened
    }

    deinit {
        kc_tpm_close(connection)
    }

    /// The machine's TPM when it has one (`/dev/tpmrm0` exists): opened, or the reason it
    /// cannot be.
    public static func onThisMachine() -> Result<TrustedPlatformModule, KeychainError>? {
        guard access("/dev/tpmrm0", F_OK) == 0 else { return nil }
        return Result { () throws(KeychainError) in try TrustedPlatformModule(tcti: deviceTCTI) }
    }

    /// Runs `call` on the connection with a message buffer; a non-zero result throws what it
    /// wrote, with `code`.
    private func call(
        _ code: KeychainError, _ body: (OpaquePointer, UnsafeMutablePointer<CChar>) -> Int32
    ) throws(KeychainError) -> Int32 {
        var message = [CChar](repeating: 0, count: Int(KC_TPM_MESSAGE))
        let result = inUse.withLock { _ in message.withUnsafeMutableBufferPointer { body(connection, $0.baseAddress!) }
        }
        guard result == 0 || result == 1 else {
            throw KeychainError(code, "the TPM (\(tcti)) refused: \(Self.text(message))")
        }
        return result
    }

    /// The text a C function wrote into `message`, up to its terminating zero.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `secret` sealed to this TPM (``kc_tpm_seal``).
    func seal(_ secret: SymmetricKey) throws(KeychainError) -> Data {
        var blob = [UInt8](repeating: 0, count: Int(KC_TPM_MAXIMUM_BLOB))
        var length = 0
        _ = try call(.errSecNotAvailable) { tpm, message in
            secret.withUnsafeBytes { bytes in
                kc_tpm_seal(
                    tpm, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &blob, &length, message)
            }
        }
        return Data(blob.prefix(length))
    }

    /// The secret `blob` seals, when this TPM sealed it.
    ///
    /// - Throws: `errSecDecode` when it does not unseal here: another TPM sealed it, or this
    ///   one's owner hierarchy was cleared since.
    func unseal(_ blob: Data) throws(KeychainError) -> SymmetricKey {
        var secret = [UInt8](repeating: 0, count: Int(KC_TPM_MAXIMUM_SECRET))
        defer { secret.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var length = 0
        _ = try call(.errSecDecode) { tpm, message in
            blob.withUnsafeBytes { bytes in
                kc_tpm_unseal(
                    tpm, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &secret, &length, message)
            }
        }
        return SymmetricKey(data: secret.prefix(length))
    }

    /// Defines the counter at NV index `index` (and increments it once); false when the index
    /// is taken already.
    func defineCounter(_ index: UInt32, auth: SymmetricKey) throws(KeychainError) -> Bool {
        try call(.errSecNotAvailable) { tpm, message in
            auth.withUnsafeBytes {
                kc_tpm_define_counter(tpm, index, $0.bindMemory(to: UInt8.self).baseAddress, $0.count, message)
            }
        } == 0
    }

    /// The value of the counter at `index`.
    func readCounter(_ index: UInt32, auth: SymmetricKey) throws(KeychainError) -> UInt64 {
        var value: UInt64 = 0
        _ = try call(.errSecNotAvailable) { tpm, message in
            auth.withUnsafeBytes {
                kc_tpm_read_counter(tpm, index, $0.bindMemory(to: UInt8.self).baseAddress, $0.count, &value, message)
            }
        }
        return value
    }

    /// Adds one to the counter at `index`.
    func incrementCounter(_ index: UInt32, auth: SymmetricKey) throws(KeychainError) {
        _ = try call(.errSecNotAvailable) { tpm, message in
            auth.withUnsafeBytes {
                kc_tpm_increment_counter(tpm, index, $0.bindMemory(to: UInt8.self).baseAddress, $0.count, message)
            }
        }
    }

    /// Removes the NV index `index`.
    func undefine(_ index: UInt32) throws(KeychainError) {
        _ = try call(.errSecNotAvailable) { tpm, message in kc_tpm_undefine(tpm, index, message) }
    }
}
