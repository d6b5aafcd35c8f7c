import Foundation
import Keychain
import LocalAuthentication
import Testing

/// A keychain with a passcode, the simulated sensor on and one finger enrolled.
func biometricKeychain(enroll: Bool = true) throws -> TestKeychain {
    let keychain = try TestKeychain.make().install()
    try keychain.setPasscode("1234")
    _ = try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "1234")))
    if enroll { _ = try keychain.perform(.enrollFinger(name: "thumb", passcode: SecretBytes(utf8: "1234"))) }
    return keychain
}

/// A biometric evaluation in which the finger touched matches.
func evaluateMatchingTouch() async -> LAError.Code? {
    await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([.touch(matching: true)]))
}

func evaluate(
    _ policy: LAPolicy, _ prompt: ScriptedPrompt, context: LAContext? = nil, reason: String = "To add a new chore"
) async -> LAError.Code? {
    let context = context ?? LAContext.scripted(prompt)
    do {
        try await context.evaluatePolicy(policy, localizedReason: reason)
        return nil
    } catch let error as LAError {
        return error.code
    } catch {
        return .authenticationFailed
    }
}

func biometryStatus(_ keychain: TestKeychain) throws -> BiometryStatus {
    guard case .biometry(let status) = try keychain.perform(.biometryStatus) else {
        throw KeychainError.errSecInternalComponent
    }
    return status
}

extension SecItemAPITests {
    @Suite struct LocalAuthenticationValueTests {
        @Test func codesAndPoliciesHaveApplesRawValues() {
            let codes: [(LAError.Code, Int)] = [
                (.authenticationFailed, -1), (.userCancel, -2), (.userFallback, -3), (.systemCancel, -4),
                (.passcodeNotSet, -5),
                (.biometryNotAvailable, -6), (.biometryNotEnrolled, -7), (.biometryLockout, -8), (.appCancel, -9),
                (.invalidContext, -10), (.companionNotAvailable, -11), (.biometryNotPaired, -12),
                (.biometryDisconnected, -13),
                (.invalidDimensions, -14), (.notInteractive, -1004),
            ]
            for (code, raw) in codes { #expect(code.rawValue == raw) }
            #expect(LAError.Code.touchIDLockout == .biometryLockout)
            #expect(LAPolicy.deviceOwnerAuthenticationWithBiometrics.rawValue == 1)
            #expect(LAPolicy.deviceOwnerAuthentication.rawValue == 2)
            #expect(
                LABiometryType.touchID.rawValue == 1 && LABiometryType.faceID.rawValue == 2
                    && LABiometryType.opticID.rawValue == 4)
            #expect(LACredentialType.applicationPassword.rawValue == 0)
            #expect(LAErrorDomain == "com.apple.LocalAuthentication")
            #expect(LATouchIDAuthenticationMaximumAllowableReuseDuration == 300)
            let error = LAError(.userCancel) as NSError
            #expect(error.domain == LAErrorDomain && error.code == -2)
            #expect(LAError(_nsError: error).code == .userCancel)
        }

        @Test func errorsMatchInCatchClausesAsOnIOS() {
            do {
                throw LAError(.userFallback)
            } catch LAError.userFallback {
                // matched
            } catch {
                Issue.record("catch LAError.userFallback did not match")
            }
        }

        @Test func theReuseDurationIsCappedAtFiveMinutes() {
            let context = LAContext.scripted(ScriptedPrompt([]))
            context.touchIDAuthenticationAllowableReuseDuration = 3600
            #expect(context.touchIDAuthenticationAllowableReuseDuration == 300)
        }
    }

    @Suite struct PreflightTests {
        @Test func biometryNeedsASensorAPasscodeAndAFinger() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var error: NSError?
            let context = LAContext.scripted(ScriptedPrompt([]))
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.biometryNotAvailable.rawValue)
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))
            #expect(error?.code == LAError.Code.passcodeNotSet.rawValue)

            try keychain.setPasscode("1234")
            _ = try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "1234")))
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.biometryNotEnrolled.rawValue)
            #expect(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error))

            _ = try keychain.perform(.enrollFinger(name: "thumb", passcode: SecretBytes(utf8: "1234")))
            #expect(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(context.biometryType == .touchID)
            #expect(context.domainState.biometry.stateHash != nil)

            _ = try keychain.perform(.removePasscode(current: SecretBytes(utf8: "1234")))
            #expect(!context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
            #expect(error?.code == LAError.Code.passcodeNotSet.rawValue)
        }

        @Test func theDomainStateChangesWhenTheEnrolledSetChanges() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let first = try biometryStatus(keychain).domainState
            _ = try keychain.perform(.enrollFinger(name: "index", passcode: SecretBytes(utf8: "1234")))
            let second = try biometryStatus(keychain).domainState
            _ = try keychain.perform(.removeFinger(name: "index", passcode: SecretBytes(utf8: "1234")))
            let third = try biometryStatus(keychain).domainState
            #expect(first != nil && second != nil && first != second)
            #expect(third == first)
            _ = try keychain.perform(.removeFinger(name: "thumb", passcode: SecretBytes(utf8: "1234")))
            #expect(try biometryStatus(keychain).domainState == nil)
        }

        @Test func companionPoliciesAreNotAvailable() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            var error: NSError?
            #expect(
                !LAContext.scripted(ScriptedPrompt([])).canEvaluatePolicy(
                    .deviceOwnerAuthenticationWithWatch, error: &error))
            #expect(error?.code == LAError.Code.companionNotAvailable.rawValue)
        }
    }

    @Suite struct BiometricPolicyTests {
        @Test func aMatchingTouchSucceeds() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true)])
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt) == nil)
            let sheet = try #require(prompt.sheets.withLock { $0.first })
            #expect(sheet.reason == "To add a new chore")
            #expect(sheet.asksForTouch)
            #expect(sheet.fallbackTitle == "Enter Passcode")
            #expect(sheet.cancelTitle == "Cancel")
        }

        @Test func threeFailedMatchesEndTheEvaluation() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: false), .touch(matching: false), .touch(matching: false)])
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt) == .authenticationFailed)
            #expect(try biometryStatus(keychain).consecutiveFailures == 3)
        }

        @Test func theFallbackButtonGivesUserFallbackAndCancelGivesUserCancel() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([.press(.fallback)]))
                    == .userFallback)
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([.press(.cancel)]))
                    == .userCancel)
        }

        @Test func anEmptyFallbackTitleHidesTheButton() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.press(.fallback), .touch(matching: true)])
            let context = LAContext.scripted(prompt)
            context.localizedFallbackTitle = ""
            context.localizedCancelTitle = "Not now"
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == nil)
            #expect(prompt.sheets.withLock { $0.first?.fallbackTitle } == nil)
            #expect(prompt.sheets.withLock { $0.first?.cancelTitle } == "Not now")
        }

        @Test func fiveFailuresAcrossEvaluationsLockBiometryOutUntilThePasscode() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let miss = ScriptedPrompt.Step.touch(matching: false)
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([miss, miss, miss]))
                    == .authenticationFailed)
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([miss, miss]))
                    == .biometryLockout)
            // The lockout survives a restart of the process.
            let restarted = try keychain.restarted().install()
            #expect(try biometryStatus(restarted).isLockedOut)
            #expect(await evaluateMatchingTouch() == .biometryLockout)
            try restarted.unlock("1234")
            #expect(await evaluateMatchingTouch() == nil)
        }

        @Test func thePasscodeIsRequiredAfterARebootAndAfter48Hours() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            keychain.clock.advance(48 * 3600)
            #expect(await evaluateMatchingTouch() == .biometryLockout)
            try keychain.unlock("1234")
            #expect(await evaluateMatchingTouch() == nil)
            keychain.clock.reboot()
            let rebooted = try keychain.restarted().install()
            #expect(await evaluateMatchingTouch() == .biometryLockout)
            try rebooted.unlock("1234")
            #expect(await evaluateMatchingTouch() == nil)
        }
    }

    @Suite struct OwnerPolicyTests {
        @Test func theFallbackLeadsToThePasscode() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.press(.fallback), .passcode("0000"), .passcode("1234")])
            #expect(await evaluate(.deviceOwnerAuthentication, prompt) == nil)
            #expect(prompt.messages.withLock { $0 }.contains("Wrong passcode. Try again."))
            #expect(prompt.sheets.withLock { $0.map(\.asksForTouch) } == [true, false])
            // The wrong passcode went through the keychain's persistent counter, and the right
            // one reset it.
            #expect(try keychain.status().failedAttempts == 0)
        }

        @Test func withoutBiometryThePasscodeIsAskedDirectly() async throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            try keychain.setPasscode("1234")
            let prompt = ScriptedPrompt([.passcode("1234")])
            #expect(await evaluate(.deviceOwnerAuthentication, prompt) == nil)
            #expect(prompt.sheets.withLock { $0.map(\.asksForTouch) } == [false])
        }

        @Test func failedMatchesFallBackToThePasscode() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let miss = ScriptedPrompt.Step.touch(matching: false)
            let prompt = ScriptedPrompt([miss, miss, miss, .passcode("1234")])
            #expect(await evaluate(.deviceOwnerAuthentication, prompt) == nil)
        }

        @Test func wrongPasscodesAreCountedAndCancelEnds() async throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            try keychain.setPasscode("1234")
            let prompt = ScriptedPrompt([.passcode("1111"), .passcode("2222"), .passcode(nil)])
            #expect(await evaluate(.deviceOwnerAuthentication, prompt) == .userCancel)
            #expect(try keychain.status().failedAttempts == 2)
        }

        @Test func noPasscodeIsPasscodeNotSet() async throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(await evaluate(.deviceOwnerAuthentication, ScriptedPrompt([])) == .passcodeNotSet)
        }

        /// Issue 53: with no sensor and no passcode, `canEvaluatePolicy` answered
        /// biometryNotAvailable and `evaluatePolicy` passcodeNotSet. They answer alike, for every
        /// state a preflight can find.
        @Test func evaluateAnswersAsCanEvaluateDoes() async throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            func agree(_ state: String) async {
                for policy in [LAPolicy.deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthentication] {
                    var error: NSError?
                    let context = LAContext.scripted(ScriptedPrompt([]))
                    guard !context.canEvaluatePolicy(policy, error: &error) else { continue }
                    let evaluated = await evaluate(policy, ScriptedPrompt([]))
                    #expect(evaluated?.rawValue == error?.code, "\(state), policy \(policy.rawValue)")
                }
            }
            await agree("no sensor, no passcode")
            try keychain.setPasscode("1234")
            await agree("no sensor")
            _ = try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "1234")))
            await agree("no finger")
            _ = try keychain.perform(.enrollFinger(name: "thumb", passcode: SecretBytes(utf8: "1234")))
            _ = try keychain.perform(.removePasscode(current: SecretBytes(utf8: "1234")))
            await agree("a sensor and a finger, no passcode")
        }
    }

    @Suite struct ContextLifecycleTests {
        @Test func aSuccessIsReusedWithinTheWindowUntilInvalidate() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            context.touchIDAuthenticationAllowableReuseDuration = 60
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == nil)
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == nil)
            #expect(prompt.sheets.withLock { $0.count } == 1)
            context.invalidate()
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == .invalidContext)
        }

        @Test func withoutAReuseWindowEveryEvaluationPrompts() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true), .touch(matching: true)])
            let context = LAContext.scripted(prompt)
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == nil)
            #expect(await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context) == nil)
            #expect(prompt.sheets.withLock { $0.count } == 2)
        }

        @Test func invalidateDuringAnEvaluationGivesAppCancel() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([])
            let context = LAContext.scripted(prompt)
            async let outcome = evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, context: context)
            while prompt.sheets.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
            context.invalidate()
            #expect(await outcome == .appCancel)
        }

        @Test func withoutATerminalItIsNotInteractiveNeverAHang() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, ScriptedPrompt([], interactive: false))
                    == .notInteractive)
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            context.interactionNotAllowed = true
            #expect(await evaluate(.deviceOwnerAuthentication, prompt, context: context) == .notInteractive)
            #expect(prompt.sheets.withLock { $0.isEmpty })
        }

        @Test func anEmptyReasonIsRefusedWithAnError() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true)])
            #expect(
                await evaluate(.deviceOwnerAuthenticationWithBiometrics, prompt, reason: "") == .authenticationFailed)
            #expect(prompt.sheets.withLock { $0.isEmpty })
        }
    }
}

extension SecItemAPITests {
    @Suite struct LocalAuthenticationSourceCompatibilityTests {
        /// The guide's `AuthenticateMe`, as iOS code writes it, unchanged but for the import.
        @Test func theGuidesAuthenticateMeCompilesAndRuns() async throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let context = LAContext.scripted(prompt)
                var error: NSError?
                if context.canEvaluatePolicy(LAPolicy.deviceOwnerAuthenticationWithBiometrics, error: &error) {
                    let replyHandler: @Sendable (Bool, (any Error)?) -> Void = { success, error in
                        if success {
                            continuation.resume(returning: true)  // PerformSegue("AuthenticationSegue")
                        } else {
                            continuation.resume(returning: false)  // "Oh Noes"
                        }
                    }
                    context.evaluatePolicy(
                        LAPolicy.deviceOwnerAuthenticationWithBiometrics, localizedReason: "To add a new chore",
                        reply: replyHandler)
                } else {
                    continuation.resume(returning: false)
                }
            }
            #expect(outcome)
        }

        @Test func errorsFromCanEvaluatePolicyReadAsOnIOS() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let context = LAContext.scripted(ScriptedPrompt([]))
            var error: NSError?
            guard !context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error), let error else {
                Issue.record("expected a failure")
                return
            }
            switch LAError.Code(rawValue: error.code) {
            case .biometryNotAvailable?: break
            default: Issue.record("unexpected \(error)")
            }
            #expect(error.domain == LAErrorDomain)
        }
    }

    @Suite struct SimulatedSensorTests {
        static let context = AuthenticationContextID.random()

        @Test func theSensorIsOffUntilTheOwnerTurnsItOnWithThePasscode() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            try keychain.setPasscode("1234")
            #expect(throws: KeychainError.errSecNotAvailable) {
                try keychain.perform(.simulateTouch(matching: false, finger: nil))
            }
            #expect(throws: KeychainError.errSecAuthFailed) {
                try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "0000")))
            }
            #expect(try biometryStatus(keychain).sensor == .none)
            _ = try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "1234")))
            #expect(try biometryStatus(keychain).sensor == .simulated)
            #expect(throws: KeychainError.errSecAuthFailed) {
                try keychain.perform(.enrollFinger(name: "x", passcode: SecretBytes(utf8: "0000")))
            }
            #expect(throws: KeychainError.errSecItemNotFound) {
                try keychain.perform(.simulateTouch(matching: true, finger: nil))
            }
        }

        @Test func templatesNeverLeaveTheEnclaveInClear() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let status = try biometryStatus(keychain)
            #expect(status.enrolledFingers == ["thumb"])
            // A touch on the channel is sealed: the file holds no template, and a forged touch
            // (random bytes) counts as a failed match. A prompt waits first, as a sheet does.
            _ = try keychain.perform(.awaitBiometricMatch(timeout: 0, context: Self.context))
            _ = try keychain.perform(.simulateTouch(matching: true, finger: "thumb"))
            let sensor = keychain.directory.appendingPathComponent("sensor")
            let files = try FileManager.default.contentsOfDirectory(atPath: sensor.path).filter {
                $0.hasSuffix(".touch")
            }
            #expect(files.count == 1)
            try Data(count: 60).write(to: sensor.appendingPathComponent("99999999999999999999-forged.touch"))
            guard case .match(let first) = try keychain.perform(.awaitBiometricMatch(timeout: 1, context: Self.context))
            else { throw KeychainError.errSecInternalComponent }
            guard
                case .match(let second) = try keychain.perform(.awaitBiometricMatch(timeout: 1, context: Self.context))
            else { throw KeychainError.errSecInternalComponent }
            if case .matched = first {} else { Issue.record("the enrolled finger's touch did not match") }
            #expect(second == .notMatched)
        }

        @Test func aStaleTouchDoesNotCount() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            _ = try keychain.perform(.awaitBiometricMatch(timeout: 0, context: Self.context))
            _ = try keychain.perform(.simulateTouch(matching: true, finger: nil))
            let sensor = keychain.directory.appendingPathComponent("sensor")
            for file in try FileManager.default.contentsOfDirectory(atPath: sensor.path) {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date().addingTimeInterval(-60)],
                    ofItemAtPath: sensor.appendingPathComponent(file).path)
            }
            guard
                case .match(let result) = try keychain.perform(
                    .awaitBiometricMatch(timeout: 0.2, context: Self.context))
            else { throw KeychainError.errSecInternalComponent }
            #expect(result == .noTouch)
        }

        @Test func aTouchAnswersOnlyAWaitingPrompt() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            #expect(throws: KeychainError.errSecBadReq) {
                try keychain.perform(.simulateTouch(matching: true, finger: nil))
            }
            _ = try keychain.perform(.awaitBiometricMatch(timeout: 0, context: Self.context))
            _ = try keychain.perform(.simulateTouch(matching: true, finger: nil))
            // The prompt closes without taking it: the touch goes with it.
            _ = try keychain.perform(.endBiometricMatch)
            guard
                case .match(let result) = try keychain.perform(
                    .awaitBiometricMatch(timeout: 0.2, context: Self.context))
            else { throw KeychainError.errSecInternalComponent }
            #expect(result == .noTouch)
        }
    }
}

/// LAErrorConstants.h's C constants are `LAError.Code`'s raw values, the aliases included.
@Test func theCConstantsAreTheErrorCodes() {
    let pairs: [(Int32, LAError.Code)] = [
        (kLAErrorAuthenticationFailed, .authenticationFailed), (kLAErrorUserCancel, .userCancel),
        (kLAErrorUserFallback, .userFallback), (kLAErrorSystemCancel, .systemCancel),
        (kLAErrorPasscodeNotSet, .passcodeNotSet), (kLAErrorBiometryNotAvailable, .biometryNotAvailable),
        (kLAErrorBiometryNotEnrolled, .biometryNotEnrolled), (kLAErrorBiometryLockout, .biometryLockout),
        (kLAErrorTouchIDNotAvailable, .touchIDNotAvailable), (kLAErrorTouchIDNotEnrolled, .touchIDNotEnrolled),
        (kLAErrorTouchIDLockout, .touchIDLockout), (kLAErrorAppCancel, .appCancel),
        (kLAErrorInvalidContext, .invalidContext), (kLAErrorCompanionNotAvailable, .companionNotAvailable),
        (kLAErrorWatchNotAvailable, .watchNotAvailable), (kLAErrorBiometryNotPaired, .biometryNotPaired),
        (kLAErrorBiometryDisconnected, .biometryDisconnected), (kLAErrorInvalidDimensions, .invalidDimensions),
        (kLAErrorNotInteractive, .notInteractive),
    ]
    for (constant, code) in pairs { #expect(Int(constant) == code.rawValue, "\(code)") }
    #expect(kLAErrorDomain == LAErrorDomain)
}
