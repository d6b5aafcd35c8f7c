import Enclave
import Foundation
import KeychainProtocol
import Testing

/// A fingerprint unlocks the keychain as Touch ID unlocks an iPhone (Apple Platform Security,
/// "Data Protection classes"): after a lock, once the passcode unlocked it since the keys' holder
/// started, within 48 hours and before five failed matches; never in place of the passcode.
@Suite struct TouchUnlockTests {
    /// An Enclave with passcode 1234, unlocked, with the simulated sensor on and a thumb
    /// enrolled, keeping its keys in `cache`.
    private func enclave(
        _ directory: URL, _ clock: StubClock, cache: any ClassKeyCache = ProcessClassKeyCache(), fresh: Bool = true
    ) throws -> Enclave {
        let enclave = try Enclave(
            directory: directory, clock: clock, cache: cache, passcodeKDF: TestKeychain.fastKDF,
            passcodeLimits: TestKeychain.fastLimits)
        if fresh {
            let passcode = SecretBytes(utf8: "1234")
            try enclave.setPasscode(current: nil, new: passcode)
            try enclave.changeSimulatedSensor(.setEnabled(true), passcode: passcode)
            try enclave.changeSimulatedSensor(.enroll(finger: "thumb"), passcode: passcode)
        }
        return enclave
    }

    private func touch(_ enclave: Enclave, matching: Bool) throws -> SensorTouch {
        .simulatedSample(try enclave.simulatedTouch(matching: matching, finger: nil))
    }

    private func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("touch-unlock-\(UUID().uuidString)")
    }

    @Test func afterALockAMatchingTouchUnlocksAndAnotherDoesNot() throws {
        let enclave = try enclave(directory(), StubClock())
        try enclave.lock()
        #expect(try !enclave.status().isUnlocked)
        #expect(try enclave.canUnlockByTouch())
        guard case .notMatched = try enclave.unlock(touch: touch(enclave, matching: false)) else {
            Issue.record("another finger unlocked the keychain")
            return
        }
        #expect(try !enclave.status().isUnlocked)
        guard case .matched = try enclave.unlock(touch: touch(enclave, matching: true)) else {
            Issue.record("the enrolled finger did not unlock the keychain")
            return
        }
        #expect(try enclave.status().isUnlocked)
        // Used once: the next lock keeps the keys again, for the next touch.
        try enclave.lock()
        #expect(try enclave.canUnlockByTouch())
    }

    @Test func afterARestartOnlyThePasscodeUnlocks() throws {
        let place = directory()
        let clock = StubClock()
        try enclave(place, clock).lock()
        let restarted = try enclave(place, clock, fresh: false)
        #expect(try !restarted.canUnlockByTouch())
        #expect(throws: KeychainError.errSecInteractionNotAllowed) {
            try restarted.unlock(touch: touch(restarted, matching: true))
        }
        #expect(try !restarted.status().isUnlocked)
        try restarted.unlock(passcode: SecretBytes(utf8: "1234"))
        try restarted.lock()
        #expect(try restarted.canUnlockByTouch())
    }

    @Test func fortyEightHoursAfterThePasscodeATouchNoLongerUnlocks() throws {
        let clock = StubClock()
        let enclave = try enclave(directory(), clock)
        try enclave.lock()
        clock.advance(48 * 3600)
        #expect(try !enclave.canUnlockByTouch())
        #expect(throws: KeychainError.errSecAuthFailed) { try enclave.unlock(touch: touch(enclave, matching: true)) }
        // The kept keys are gone: even the clock put back would not bring them.
        #expect(throws: KeychainError.errSecInteractionNotAllowed) {
            try enclave.unlock(touch: touch(enclave, matching: true))
        }
        try enclave.unlock(passcode: SecretBytes(utf8: "1234"))
        try enclave.lock()
        #expect(try enclave.canUnlockByTouch())
    }

    @Test func fiveFailedMatchesNeedThePasscode() throws {
        let enclave = try enclave(directory(), StubClock())
        try enclave.lock()
        for _ in 0..<5 { _ = try enclave.unlock(touch: touch(enclave, matching: false)) }
        #expect(try !enclave.canUnlockByTouch())
        #expect(throws: KeychainError.self) { try enclave.unlock(touch: touch(enclave, matching: true)) }
        #expect(try !enclave.status().isUnlocked)
    }

    /// The kernel keyring an embedded keychain keeps its keys in is shared by every process of
    /// the user: a lock there keeps nothing, so a touch never unlocks an embedded keychain.
    @Test func aLockInTheSharedKernelKeyringKeepsNothing() throws {
        let cache = try #require(KernelKeyringClassKeyCache())
        let enclave = try enclave(directory(), StubClock(), cache: cache)
        defer { _ = try? enclave.erase(passcode: SecretBytes(utf8: "1234")) }
        try enclave.lock()
        #expect(try !enclave.canUnlockByTouch())
        #expect(throws: KeychainError.errSecInteractionNotAllowed) {
            try enclave.unlock(touch: touch(enclave, matching: true))
        }
    }
}
