import Foundation
import KeychainProtocol

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

    static func load(_ url: URL) throws(KeychainError) -> PasscodeAttempts {
        guard let data = try EnclaveFiles.read(url) else { return PasscodeAttempts() }
        guard let attempts = try? JSONDecoder().decode(PasscodeAttempts.self, from: data) else {
            // A damaged counter must not reset the count to zero: treat it as the worst case.
            return PasscodeAttempts(failed: 9)
        }
        return attempts
    }

    func save(_ url: URL) throws(KeychainError) {
        guard let data = try? JSONEncoder().encode(self) else { throw KeychainError(.errSecInternalComponent, "cannot encode the attempt counter") }
        try EnclaveFiles.writeAtomically(data, to: url)
    }
}
