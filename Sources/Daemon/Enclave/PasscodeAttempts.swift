import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// The persistent record of failed passcode attempts and the delay they impose
/// (``PasscodeDelay``). An attempt is written to disk
/// before the passcode is checked, so killing the process during the check still counts it.
/// The same wrong passcode entered again is not counted again.
///
/// The delay runs on the boot clock (``EnclaveClock``). After a reboot the current delay period
/// starts over from the first check, as on Apple devices: neither changing the wall clock nor
/// restarting shortens it.
struct PasscodeAttempts: Codable, Sendable, Equatable {
    /// Consecutive failed attempts.
    var failed: Int = 0
    /// Keyed fingerprint of the last wrong passcode (costs a full KDF run to test a guess).
    var lastFailedFingerprint: Data?
    /// Boot during which `delayStart` was taken.
    var bootID: String?
    /// Boot-clock time at which the current delay began.
    var delayStart: Double?

    /// Seconds left before the next attempt, restarting the period on a new boot (the caller
    /// persists the change when `restarted` comes back true).
    mutating func remainingDelay(clock: any EnclaveClock) -> (seconds: Double, restarted: Bool) {
        let delay = PasscodeDelay.seconds(afterFailures: failed)
        guard delay > 0 else { return (0, false) }
        let now = clock.uptime()
        let boot = clock.bootID
        var restarted = false
        if bootID != boot || delayStart == nil {
            // A reboot: the current delay period starts over from now.
            bootID = boot
            delayStart = now
            restarted = true
        }
        let remaining = (delayStart ?? now) + delay - now
        return (max(0, remaining), restarted)
    }

    static let fileName = "attempts"
    static let version = 2

    /// The counter as the failures it stands for when its file was altered or removed while a
    /// passcode is set: the last step of the delay table, so that tampering never buys guesses.
    static let assumedAfterTampering = 9

    /// Reads the authenticated counter.
    ///
    /// With a passcode set, a counter that is missing, altered or from another device is not
    /// believed: the Enclave carries on as if ``assumedAfterTampering`` attempts had failed, with
    /// the delay starting now, and says so (`tampered` is true; the caller persists the new
    /// counter and reports `errSecDecode`). Without a passcode the counter means nothing and a
    /// fresh one is used.
    static func load(
        _ files: KeychainDirectory, deviceKey: SymmetricKey, passcodeSet: Bool
    ) throws(KeychainError) -> (attempts: PasscodeAttempts, tampered: Bool) {
        do {
            if let data = try files.read(fileName) {
                let attempts = try AuthenticatedState.decode(
                    data, as: PasscodeAttempts.self, name: fileName, version: version, deviceKey: deviceKey,
                    path: files.path(fileName))
                return (attempts, false)
            }
        } catch KeychainError.errSecDecode {
            // Not believed; handled below.
        }
        guard passcodeSet else { return (PasscodeAttempts(), false) }
        return (PasscodeAttempts(failed: assumedAfterTampering), true)
    }

    func save(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) {
        try files.writeAtomically(
            AuthenticatedState.encode(self, name: Self.fileName, version: Self.version, deviceKey: deviceKey),
            to: Self.fileName)
    }
}
