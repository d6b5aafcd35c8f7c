import Foundation
import KeychainProtocol

/// The Enclave's persistent biometric state (file `biometry`, JSON, mode 0600): simulated
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
    static let lockoutThreshold = 5
    /// Apple: the passcode is required when it has not been used for 48 hours.
    static let passcodeInterval: Double = 48 * 3600

    var isLockedOut: Bool { consecutiveFailures >= Self.lockoutThreshold }

    /// True after a reboot (or before the first passcode entry) and 48 hours after the last one.
    func passcodeRequired(clock: any EnclaveClock) -> Bool {
        guard lastPasscodeBootID == clock.bootID, let last = lastPasscodeUptime else { return true }
        return clock.uptime() - last >= Self.passcodeInterval
    }

    static func load(_ url: URL) throws(KeychainError) -> BiometryState {
        guard let data = try EnclaveFiles.read(url) else { return BiometryState() }
        guard let state = try? JSONDecoder().decode(BiometryState.self, from: data) else {
            throw KeychainError(.errSecDecode, "the biometry state file \(url.path) is damaged")
        }
        return state
    }

    func save(_ url: URL) throws(KeychainError) {
        guard let data = try? JSONEncoder().encode(self) else { throw KeychainError(.errSecInternalComponent, "cannot encode the biometry state") }
        try EnclaveFiles.writeAtomically(data, to: url)
    }
}
