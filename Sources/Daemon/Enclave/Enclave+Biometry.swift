import Crypto
import Foundation
import KeychainProtocol

/// Biometric matching and its rules, inside the Enclave (DESIGN.md requirement 7): simulated
/// templates never leave it in clear; it counts failed matches and decides lockout and when
/// the passcode is required.
extension Enclave {
    func loadBiometry() throws(KeychainError) -> BiometryState {
        try BiometryState.load(files, deviceKey: deviceKey)
    }

    private func updateBiometry<Result>(
        _ body: (inout BiometryState) throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        try withStateLock { () throws(KeychainError) -> Result in
            var state = try loadBiometry()
            let result = try body(&state)
            try state.save(files, deviceKey: deviceKey)
            return result
        }
    }

    private func channelKey() -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain simulated-sensor v1".utf8), outputByteCount: 32)
    }

    private func templateKey() -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain template v1".utf8), outputByteCount: 32)
    }

    /// What the Enclave knows of biometry. The domain state is that of the simulated sensor's
    /// enrolled set when it is on, otherwise that of `sensorFingers` (fprintd's enrolled fingers),
    /// nil when neither is given.
    public func biometryReport(sensorFingers: [String] = []) throws(KeychainError) -> BiometryReport {
        let state = try loadBiometry()
        let enrollments =
            state.simulatorEnabled ? state.fingers.map(\.enrollmentID) : sensorFingers.map { Data($0.utf8) }
        return BiometryReport(
            simulatedSensorEnabled: state.simulatorEnabled, simulatedFingers: state.fingers.map(\.name),
            consecutiveFailures: state.consecutiveFailures, isLockedOut: state.isLockedOut,
            passcodeRequired: state.passcodeRequired(clock: clock), passcodeSet: try status().passcodeSet,
            domainState: domainState(enrollments: enrollments))
    }

    /// A keyed hash of the enrolled set (`evaluatedPolicyDomainState`): changes when a finger is
    /// added or removed, differs between devices, nil when nothing is enrolled.
    private func domainState(enrollments: [Data]) -> Data? {
        guard !enrollments.isEmpty else { return nil }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain domain-state v1".utf8), outputByteCount: 32)
        return Data(
            HMAC<SHA256>.authenticationCode(
                for: LengthPrefixed.encode(label: "domain v1", enrollments.sorted { $0.lexicographicallyPrecedes($1) }),
                using: key))
    }

    /// Changes the simulated sensor: every change needs the passcode (counted like an unlock).
    ///
    /// - Throws: `errSecParam` for a finger name of no or more than 64 bytes, or a sixth finger;
    ///   `errSecDuplicateItem` when the name is enrolled, `errSecItemNotFound` when it is not
    ///   (removal); the passcode's errors.
    public func changeSimulatedSensor(_ change: SimulatedSensorChange, passcode: SecretBytes) throws(KeychainError) {
        if case .enroll(let name) = change, name.isEmpty || name.utf8.count > 64 {
            throw KeychainError(.errSecParam, "a finger name has 1 to 64 bytes")
        }
        try verifyPasscode(passcode)
        switch change {
        case .setEnabled(let enabled):
            try updateBiometry { (state: inout BiometryState) throws(KeychainError) in
                state.simulatorEnabled = enabled
            }
        case .enroll(let name):
            try enrollSimulatedFinger(name)
        case .remove(let name):
            try updateBiometry { (state: inout BiometryState) throws(KeychainError) in
                guard state.fingers.contains(where: { $0.name == name }) else {
                    throw KeychainError(.errSecItemNotFound, "no finger with that name is enrolled")
                }
                state.fingers.removeAll { $0.name == name }
            }
        }
    }

    private func enrollSimulatedFinger(_ name: String) throws(KeychainError) {
        let templateKey = templateKey()
        try updateBiometry { (state: inout BiometryState) throws(KeychainError) in
            guard !state.fingers.contains(where: { $0.name == name }) else {
                throw KeychainError(.errSecDuplicateItem, "a finger with that name is already enrolled")
            }
            guard state.fingers.count < 5 else {
                throw KeychainError(.errSecParam, "at most 5 fingers can be enrolled, as on Touch ID")
            }
            let template = SymmetricKey(size: .bits256)
            let sealed = template.withUnsafeBytes {
                try? AES.GCM.seal($0, using: templateKey, authenticating: Data(name.utf8)).combined
            }
            guard let sealed else { throw KeychainError(.errSecInternalComponent, "cannot seal the template") }
            state.fingers.append(
                .init(
                    name: name, sealedTemplate: sealed,
                    enrollmentID: Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })))
        }
    }

    /// A touch for the simulated sensor's channel: the template of an enrolled finger (the
    /// named one, or the first) or random bytes, sealed so that only this Enclave can read it.
    public func simulatedTouch(matching: Bool, finger: String?) throws(KeychainError) -> Data {
        let state = try loadBiometry()
        guard state.simulatorEnabled else {
            throw KeychainError(
                .errSecNotAvailable,
                "the simulated sensor is off; the device owner turns it on with `keychainctl biometry simulate on`")
        }
        var sample: Data
        if matching {
            guard let enrolled = state.fingers.first(where: { finger == nil || $0.name == finger }) else {
                throw KeychainError(
                    .errSecItemNotFound,
                    finger == nil ? "no finger is enrolled" : "no finger with that name is enrolled")
            }
            sample = try openTemplate(enrolled)
        } else {
            sample = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        }
        defer { sample.resetBytes(in: 0..<sample.count) }
        guard let sealed = try? AES.GCM.seal(sample, using: channelKey(), authenticating: Data("touch".utf8)).combined
        else {
            throw KeychainError(.errSecInternalComponent, "cannot seal the touch")
        }
        return sealed
    }

    /// Judges a touch and counts it: a failure moves toward the lockout, a match earns a grant
    /// for the enrolled set (see the rules below). A simulated sample is matched against the
    /// enrolled templates in constant time; fprintd's verdict is taken as it is, for the set of
    /// fingers it names.
    public func evaluate(_ touch: SensorTouch) throws(KeychainError) -> TouchVerdict {
        switch touch {
        case .simulatedSample(let sample):
            return try matchSimulatedTouch(sample)
        case .sensorVerdict(let matched, let fingers):
            return try recordBiometricResult(
                matched: matched, domainState: domainState(enrollments: fingers.map { Data($0.utf8) }))
        }
    }

    private func matchSimulatedTouch(_ sealedSample: Data) throws(KeychainError) -> TouchVerdict {
        guard let box = try? AES.GCM.SealedBox(combined: sealedSample),
            var sample = try? AES.GCM.open(box, using: channelKey(), authenticating: Data("touch".utf8))
        else {
            // Not written by this Enclave: a forged touch is a failed match.
            return try recordBiometricResult(matched: false, domainState: nil)
        }
        defer { sample.resetBytes(in: 0..<sample.count) }
        var matched = false
        let fingers = try loadBiometry().fingers
        for finger in fingers {
            var template = try openTemplate(finger)
            defer { template.resetBytes(in: 0..<template.count) }
            matched = constantTimeEqual(template, sample) || matched
        }
        return try recordBiometricResult(
            matched: matched, domainState: domainState(enrollments: fingers.map(\.enrollmentID)))
    }

    /// Counts a match result from any sensor: a failure moves toward the lockout (5 in a row,
    /// across evaluations and processes); a success resets the count and earns a grant for the
    /// enrolled set `domainState`. A locked-out Enclave, or one that needs the passcode first,
    /// refuses even a matching touch.
    private func recordBiometricResult(matched: Bool, domainState: Data?) throws(KeychainError) -> TouchVerdict {
        try updateBiometry { (state: inout BiometryState) throws(KeychainError) -> TouchVerdict in
            guard !state.isLockedOut else {
                throw KeychainError(
                    .errSecAuthFailed,
                    "biometry is locked out after \(BiometryState.lockoutThreshold) failed matches; enter the passcode")
            }
            guard !state.passcodeRequired(clock: clock) else {
                throw KeychainError(.errSecAuthFailed, "the passcode is required before biometry can be used again")
            }
            if matched {
                state.consecutiveFailures = 0
                return .matched(issueGrant(.biometry, domainState: domainState))
            }
            state.consecutiveFailures += 1
            return .notMatched
        }
    }

    /// Checks the device passcode for an authentication, under the attempt rules, without
    /// changing the lock state. Success clears the biometric lockout, starts a new 48-hour
    /// period, and earns a passcode grant.
    @discardableResult
    public func verifyPasscode(_ passcode: SecretBytes) throws(KeychainError) -> AuthenticationGrant {
        try withStateLock { () throws(KeychainError) -> AuthenticationGrant in
            let keybag = try keybag()
            guard keybag.passcode != nil else { throw KeychainError(.errSecNotAvailable, "no device passcode is set") }
            _ = try verify(passcode, keybag)
            return issueGrant(.passcode, domainState: nil)
        }
    }

    /// Records a correct passcode entry: resets the biometric failure count and the 48-hour
    /// clock. Called under the enclave lock by every successful passcode check. A damaged
    /// biometry file is left as it is (biometry stays unavailable until the owner moves it away)
    /// and does not stand in the way of the passcode.
    func recordPasscodeEntry() {
        guard var state = try? loadBiometry() else { return }
        state.consecutiveFailures = 0
        state.lastPasscodeBootID = clock.bootID
        state.lastPasscodeUptime = clock.uptime()
        try? state.save(files, deviceKey: deviceKey)
    }

    private func openTemplate(_ finger: BiometryState.Finger) throws(KeychainError) -> Data {
        guard let box = try? AES.GCM.SealedBox(combined: finger.sealedTemplate),
            let template = try? AES.GCM.open(box, using: templateKey(), authenticating: Data(finger.name.utf8))
        else { throw KeychainError(.errSecDecode, "an enrolled template does not open: the biometry file was altered") }
        return template
    }

    private func constantTimeEqual(_ a: Data, _ b: Data) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
