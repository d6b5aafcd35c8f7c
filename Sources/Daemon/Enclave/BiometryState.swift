import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The Enclave's persistent biometric state (file `biometry`, authenticated JSON, mode 0600): simulated
/// templates (sealed), the consecutive-failure counter, and when the passcode was last entered.
struct BiometryState: Codable, Sendable {
    /// An enrolled finger of the simulated sensor: a random template sealed by the Enclave.
    struct Finger: Codable, Sendable {
        var name: String
        /// AES-GCM sealed 32-byte template; never leaves the Enclave in clear.
        var sealedTemplate: Data
        /// A random identity of this enrollment, for the domain-state hash.
        var enrollmentID: Data
    }

    var simulatorEnabled = false
    var fingers: [Finger] = []
    var consecutiveFailures = 0
    var lastPasscodeBootID: String?
    var lastPasscodeUptime: Double?

    /// Apple: 5 unsuccessful matches, then the passcode is required.
    static let lockoutThreshold = BiometryStatus.lockoutThreshold
    /// Apple: the passcode is required when it has not been used for 48 hours.
    static let passcodeInterval: Double = 48 * 3600

    var isLockedOut: Bool { consecutiveFailures >= Self.lockoutThreshold }

    /// True after a reboot (or before the first passcode entry) and 48 hours after the last one.
    func passcodeRequired(clock: any EnclaveClock) -> Bool {
        guard lastPasscodeBootID == clock.bootID, let last = lastPasscodeUptime else { return true }
        return clock.uptime() - last >= Self.passcodeInterval
    }

    static let fileName = "biometry"
    static let version = 2

    /// Reads the authenticated state; a fresh one when there is none (which requires the
    /// passcode before any match, so removing the file gains nothing).
    ///
    /// - Throws: `errSecDecode` when the file was altered or belongs with another device secret:
    ///   biometry is then unavailable until the file is restored or moved away (its enrollments
    ///   are lost with it); the passcode and the items are not affected.
    static func load(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) -> BiometryState {
        guard let data = try files.read(fileName) else { return BiometryState() }
        do {
            return try AuthenticatedState.decode(
                data, as: BiometryState.self, name: fileName, version: version, deviceKey: deviceKey,
                path: files.path(fileName))
        } catch {
            throw KeychainError(
                .errSecDecode,
                "biometry is unavailable: \(error.message). Move \(files.path(fileName)) away and enroll again to "
                    + "use biometry; the passcode still works"
            )
        }
    }

    func save(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) {
        try files.writeAtomically(
            AuthenticatedState.encode(self, name: Self.fileName, version: Self.version, deviceKey: deviceKey),
            to: Self.fileName)
    }
}
