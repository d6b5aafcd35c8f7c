import Foundation
import KeychainClient
import KeychainPrompt

/// One run of `evaluatePolicy`: preflight against the Enclave's state, then the sheet, touches
/// and passcode entry. The Enclave matches touches, counts failures and checks the passcode;
/// this code only decides what to show next.
struct PolicyEvaluation {
    let policy: LAPolicy
    let reason: String
    let settings: LAContext.Settings
    let prompt: any AuthenticationPrompt
    let isCancelled: () -> Bool
    /// The context evaluating: the server files what a match or a passcode earns under it.
    let context: AuthenticationContextID
    /// Skip biometry and ask for the passcode (items whose access control is devicePasscode).
    var passcodeOnly = false

    /// Apple: within one evaluation, 3 failed matches end it.
    static let matchesPerEvaluation = 3

    /// Checks what the policy needs, as `canEvaluatePolicy` does.
    static func preflight(_ policy: LAPolicy) -> Result<BiometryStatus, LAError> {
        let status: BiometryStatus
        do {
            guard case .biometry(let reply) = try ProcessKeychain.perform(.biometryStatus) else {
                return .failure(LAError(.biometryNotAvailable))
            }
            status = reply
        } catch {
            return .failure(
                LAError(.biometryNotAvailable, message: "the keychain could not be reached: \(error.message)"))
        }
        switch policy {
        case .deviceOwnerAuthenticationWithWatch, .deviceOwnerAuthenticationWithWristDetection:
            return .failure(LAError(.companionNotAvailable))
        case .deviceOwnerAuthentication:
            return status.passcodeSet ? .success(status) : .failure(LAError(.passcodeNotSet))
        case .deviceOwnerAuthenticationWithBiometrics, .deviceOwnerAuthenticationWithBiometricsOrWatch:
            guard status.sensor != .none else { return .failure(LAError(.biometryNotAvailable)) }
            guard status.passcodeSet else { return .failure(LAError(.passcodeNotSet)) }
            guard !status.enrolledFingers.isEmpty else { return .failure(LAError(.biometryNotEnrolled)) }
            guard !status.isLockedOut, !status.passcodeRequired else {
                return .failure(
                    LAError(
                        .biometryLockout,
                        message: status.isLockedOut
                            ? "Biometry is locked out after 5 failed matches; enter the device passcode to use it "
                                + "again."
                            : "The passcode is required before biometry can be used (after a restart, or 48 hours)."))
            }
            return .success(status)
        }
    }

    /// Runs the evaluation; on success returns the biometry status it ran with. What the
    /// Enclave granted stays in the server, under ``context``.
    func run() -> Result<BiometryStatus, LAError> {
        let status: BiometryStatus
        switch Self.preflight(passcodeOnly ? .deviceOwnerAuthentication : policy) {
        case .failure(let error): return .failure(error)
        case .success(let preflight): status = preflight
        }
        guard !settings.interactionNotAllowed, prompt.isInteractive else {
            return .failure(
                LAError(
                    .notInteractive,
                    message: "authentication needs a prompt, and this program has no terminal or forbids interaction"))
        }
        let biometryUsable =
            status.sensor != .none && !status.enrolledFingers.isEmpty && !status.isLockedOut && !status.passcodeRequired
        if biometryUsable && !passcodeOnly {
            switch biometricPhase() {
            case .success: return .success(status)
            case .failure(let error): return .failure(error)
            case .fallBackToPasscode: break
            }
        }
        return passcodePhase().map { status }
    }

    private enum BiometricOutcome {
        case success
        case failure(LAError)
        case fallBackToPasscode
    }

    private var biometricsOnly: Bool { policy != .deviceOwnerAuthentication }

    private func biometricPhase() -> BiometricOutcome {
        let fallback: String? =
            switch settings.fallbackTitle {
            case .some(""): nil
            case .some(let title): title
            case .none: biometricsOnly ? "Enter Password" : "Enter Passcode"
            }
        // The sensor learns that a prompt waits before the sheet asks for a touch: a touch
        // only answers a waiting prompt.
        _ = try? ProcessKeychain.perform(.awaitBiometricMatch(timeout: 0, context: context))
        let session = prompt.present(sheet(asksForTouch: true, fallbackTitle: fallback))
        defer {
            _ = try? ProcessKeychain.perform(.endBiometricMatch)
            session.dismiss()
        }
        var failures = 0
        while true {
            if isCancelled() { return .failure(LAError(.appCancel)) }
            switch session.pressedButton() {
            case .cancel?: return .failure(LAError(.userCancel))
            case .fallback? where fallback != nil:
                return biometricsOnly ? .failure(LAError(.userFallback)) : .fallBackToPasscode
            default: break
            }
            let match: BiometricMatch
            do {
                guard
                    case .match(let reply) = try ProcessKeychain.perform(
                        .awaitBiometricMatch(timeout: 0.1, context: context))
                else { continue }
                match = reply
            } catch {
                // The Enclave refuses matches once locked out.
                return biometricsOnly
                    ? .failure(LAError(.biometryLockout, message: error.message)) : .fallBackToPasscode
            }
            switch match {
            case .noTouch: continue
            case .matched:
                return .success
            case .notMatched:
                failures += 1
                let status = try? Self.preflight(.deviceOwnerAuthentication).get()
                if status?.isLockedOut == true {
                    session.show(
                        "Not recognized. Too many failed touches: the fingerprint is locked until the passcode is "
                            + "entered."
                    )
                    return biometricsOnly ? .failure(LAError(.biometryLockout)) : .fallBackToPasscode
                }
                if failures >= Self.matchesPerEvaluation {
                    session.show(biometricsOnly ? "Not recognized." : "Not recognized. Enter the passcode instead.")
                    return biometricsOnly ? .failure(LAError(.authenticationFailed)) : .fallBackToPasscode
                }
                // Tries left: in this sheet, and before the lockout across sheets.
                let here = Self.matchesPerEvaluation - failures
                let beforeLockout = BiometryStatus.lockoutThreshold - (status?.consecutiveFailures ?? 0)
                let left = min(here, beforeLockout)
                let lockout =
                    beforeLockout <= here ? " before the fingerprint is locked until the passcode is entered" : ""
                session.show("Not recognized. \(left) more \(left == 1 ? "try" : "tries")\(lockout).")
            }
        }
    }

    private func passcodePhase() -> Result<Void, LAError> {
        let session = prompt.present(sheet(asksForTouch: false, fallbackTitle: nil))
        defer { session.dismiss() }
        while true {
            // During a delay after failed attempts, say how long, count down, and take no input.
            if case .cancelled(let code) = waitOutDelay(session) { return .failure(LAError(code)) }
            guard let passcode = session.readPasscode(shouldStop: isCancelled) else {
                return .failure(LAError(isCancelled() ? .appCancel : .userCancel))
            }
            do {
                _ = try ProcessKeychain.perform(.verifyPasscode(passcode, context: context))
                return .success(())
            } catch KeychainError.errSecAuthFailed {
                session.show("Wrong passcode. Try again.")
            } catch KeychainError.errSecInteractionNotAllowed {
                continue
            } catch {
                session.show(error.message)
                return .failure(LAError(.authenticationFailed, message: error.message))
            }
        }
    }

    private enum DelayOutcome {
        case ready
        case cancelled(LAError.Code)
    }

    /// Counts down a passcode delay on the sheet (Esc still cancels; other keys are ignored).
    private func waitOutDelay(_ session: any PromptSession) -> DelayOutcome {
        var waited = false
        while true {
            guard case .status(let status)? = try? ProcessKeychain.perform(.deviceStatus),
                status.secondsUntilNextAttempt > 0
            else { break }
            if isCancelled() { return .cancelled(.appCancel) }
            if session.pressedButton() == .cancel { return .cancelled(.userCancel) }
            let seconds = Int(status.secondsUntilNextAttempt.rounded(.up))
            session.update(
                "\(status.failedAttempts) wrong passcodes. Try again in "
                    + "\(seconds / 60):\(String(format: "%02d", seconds % 60))."
            )
            waited = true
            usleep(200_000)
        }
        if waited { session.show("You can enter the passcode now.") }
        return .ready
    }

    private func sheet(asksForTouch: Bool, fallbackTitle: String?) -> PromptSheet {
        let cancel = settings.cancelTitle.flatMap { $0.isEmpty ? nil : $0 } ?? "Cancel"
        return PromptSheet(
            programName: ProcessInfo.processInfo.processName, reason: reason, asksForTouch: asksForTouch,
            cancelTitle: cancel, fallbackTitle: fallbackTitle)
    }
}
