import Biometrics
import Enclave
import Foundation
import KeychainProtocol
import KeychainSupport

/// Biometric requests: the sensor in use, its waits, enrollment, and the simulated sensor.
/// The sensor reports touches; the Enclave matches (simulated) or counts (fprintd) them.
extension KeychainServer {
    /// The simulated sensor when the owner turned it on; otherwise fprintd when it answers;
    /// otherwise none.
    func currentSensor() throws(KeychainError) -> (any BiometricSensor)? {
        sensor(for: try enclave.biometryReport())
    }

    /// The sensor in use, given what the Enclave reports.
    private func sensor(for report: BiometryReport) -> (any BiometricSensor)? {
        if report.simulatedSensorEnabled {
            return SimulatedSensor(directory: simulatedSensorDirectory)
        }
        return fprintd.withLock { cached in
            if cached == nil { cached = FprintdSensor.detect(user: fingerprintUser) }
            return cached
        }
    }

    /// Where the simulated sensor takes its touches: a directory in the keychain's own.
    private var simulatedSensorDirectory: URL {
        store.url.deletingLastPathComponent().appendingPathComponent(KeychainPaths.simulatedSensorName)
    }

    /// One report from the Enclave, and a second only for fprintd, whose enrolled set (the
    /// domain state's input) is known once the sensor is.
    func biometryStatus() throws(KeychainError) -> BiometryStatus {
        var report = try enclave.biometryReport()
        let sensor = sensor(for: report)
        var fingers = sensor is SimulatedSensor ? report.simulatedFingers : []
        if let fprintd = sensor as? FprintdSensor {
            fingers = try fprintd.enrolledFingers()
            report = try enclave.biometryReport(sensorFingers: fingers)
        }
        return BiometryStatus(
            sensor: sensor?.kind ?? .none, enrolledFingers: fingers,
            isLockedOut: report.isLockedOut, passcodeRequired: report.passcodeRequired,
            consecutiveFailures: report.consecutiveFailures, domainState: report.domainState,
            passcodeSet: report.passcodeSet)
    }

    /// Waits for a touch and matches it; a match's grant is filed under `context` for the
    /// caller's connection, never returned.
    func awaitBiometricMatch(
        timeout: Double, context: AuthenticationContextID, caller: CallerIdentity
    ) throws(KeychainError) -> BiometricMatch {
        guard let sensor = try currentSensor() else {
            throw KeychainError(.errSecNotAvailable, "no fingerprint sensor is available")
        }
        guard let touch = try awaitTouch(sensor, timeout: timeout) else { return .noTouch }
        switch try enclave.evaluate(touch) {
        case .matched(let grant):
            contexts.record(grant, context: context, caller: caller)
            return .matched
        case .notMatched:
            return .notMatched
        }
    }

    /// What the sensor reported within `timeout` seconds (0 to 60), for the Enclave to judge;
    /// nil when nothing touched it.
    private func awaitTouch(_ sensor: any BiometricSensor, timeout: Double) throws(KeychainError) -> SensorTouch? {
        guard timeout >= 0, timeout <= 60 else {
            throw KeychainError(.errSecParam, "a wait for a touch lasts 0 to 60 seconds")
        }
        switch try sensor.awaitTouch(timeout: timeout) {
        case .none: return nil
        case .sample(let sample): return .simulatedSample(sample)
        case .verdict(let matched):
            let fingers = try (sensor as? FprintdSensor)?.enrolledFingers() ?? []
            return .sensorVerdict(matched: matched, enrolledFingers: fingers)
        }
    }

    /// A touch asked to unlock the keychain (``KeychainRequest/unlockByBiometry(timeout:)``):
    /// keychaind asks the sensor itself, and the Enclave puts back the keys the lock kept when
    /// the touch matches. `done` when nothing is locked.
    func unlockByTouch(timeout: Double) throws(KeychainError) -> KeychainReply {
        let status = try enclave.status()
        guard status.passcodeSet, !status.isUnlocked else { return .done }
        guard let sensor = try currentSensor() else {
            throw KeychainError(.errSecNotAvailable, "no fingerprint sensor is available: unlock with the passcode")
        }
        guard !(sensor is SimulatedSensor) else {
            throw KeychainError(
                .errSecNotAvailable,
                "the simulated sensor is touched from an owner session, so it cannot unlock: use the passcode")
        }
        guard try enclave.canUnlockByTouch() else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "the keychain needs its passcode: a fingerprint unlocks it only after the passcode did since "
                    + "keychaind started, within 48 hours, and before 5 failed matches")
        }
        guard let touch = try awaitTouch(sensor, timeout: timeout) else { return .match(.noTouch) }
        switch try enclave.unlock(touch: touch) {
        case .matched: return .match(.matched)
        case .notMatched: return .match(.notMatched)
        }
    }

    /// A touch asked for an owner session (``KeychainRequest/openOwnerSessionByBiometry(timeout:)``):
    /// matched and counted like any other, under a context of its own that is forgotten at once,
    /// so the grant serves nothing else. keychaind opens the session on `matched`.
    func ownerMatch(timeout: Double, caller: CallerIdentity) throws(KeychainError) -> BiometricMatch {
        guard try enclave.status().passcodeSet else {
            throw KeychainError(
                .errSecNotAvailable, "no device passcode is set: set one first (`keychainctl passcode set`)")
        }
        guard !(try currentSensor() is SimulatedSensor) else {
            throw KeychainError(
                .errSecNotAvailable,
                "the simulated sensor is touched from an owner session, so it cannot open one: use the passcode")
        }
        let context = AuthenticationContextID.random()
        defer { contexts.invalidate(context, caller: caller) }
        return try awaitBiometricMatch(timeout: timeout, context: context, caller: caller)
    }

    func endBiometricMatch() throws(KeychainError) {
        try currentSensor()?.endWait()
    }

    func enrollFinger(_ name: String, passcode: SecretBytes) throws(KeychainError) {
        try changeEnrollment(
            passcode,
            fprintd: { (sensor: FprintdSensor) throws(KeychainError) in try sensor.enroll(name) },
            simulated: { () throws(KeychainError) in
                try enclave.changeSimulatedSensor(.enroll(finger: name), passcode: passcode)
            })
    }

    func removeFinger(_ name: String, passcode: SecretBytes) throws(KeychainError) {
        try changeEnrollment(
            passcode,
            fprintd: { (sensor: FprintdSensor) throws(KeychainError) in try sensor.remove(name) },
            simulated: { () throws(KeychainError) in
                try enclave.changeSimulatedSensor(.remove(finger: name), passcode: passcode)
            })
    }

    /// Enrollment changes need the passcode: fprintd's after the Enclave checks it, the
    /// simulated sensor's inside the Enclave.
    private func changeEnrollment(
        _ passcode: SecretBytes, fprintd: (FprintdSensor) throws(KeychainError) -> Void,
        simulated: () throws(KeychainError) -> Void
    ) throws(KeychainError) {
        switch try currentSensor() {
        case let sensor as FprintdSensor:
            guard sensor.user == FprintdSensor.currentUser() else {
                throw KeychainError(
                    .errSecNotAvailable,
                    "the system keychain only verifies fingers; enroll or remove yours with fprintd-enroll or "
                        + "fprintd-delete, in your own session")
            }
            try enclave.verifyPasscode(passcode)
            try fprintd(sensor)
        case is SimulatedSensor:
            try simulated()
        default:
            throw KeychainError(
                .errSecNotAvailable,
                "no fingerprint sensor is available; turn on the simulated one with `keychainctl biometry simulate on`")
        }
    }

    func simulateTouch(matching: Bool, finger: String?) throws(KeychainError) {
        let sample = try enclave.simulatedTouch(matching: matching, finger: finger)
        try SimulatedSensor(directory: simulatedSensorDirectory).post(sample)
    }
}
