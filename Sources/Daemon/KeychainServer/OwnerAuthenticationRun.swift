import Foundation
import KeychainPrompt
import KeychainProtocol

/// One owner authentication, run by the keychain (``KeychainRequest/authenticateOwner(_:)``):
/// the state the factors need, then the sheet, touches and passcode entry. The Enclave matches
/// touches, counts failures and checks the passcode; this code decides what the sheet shows
/// next. What a match or a passcode earns is filed under the request's context for the asking
/// connection; the app gets only the outcome.
struct OwnerAuthenticationRun {
    /// What the authentication is for.
    enum Purpose {
        /// An app's evaluation: what it earns is filed under its context.
        case authorizeContext
        /// Unlocking the keychain: the passcode typed unlocks it.
        case unlock
        /// Proving the owner for an owner session, which keychaind opens on success.
        case proveOwner
    }

    let server: KeychainServer
    let authentication: OwnerAuthentication
    let purpose: Purpose
    let caller: CallerIdentity
    let prompts: any PromptProvider

    /// Apple: within one evaluation, 3 failed matches end it.
    static let matchesPerEvaluation = 3

    /// The outcome: the biometry status the authentication ran with, or why it failed.
    enum Outcome {
        case succeeded(BiometryStatus)
        case failed(OwnerAuthenticationFailure, String)
    }

    private var biometryOnly: Bool { authentication.factors == .biometry }
    private var context: AuthenticationContextID { authentication.context }

    /// Runs the authentication.
    func run() throws(KeychainError) -> Outcome {
        let status = try server.biometryStatus()
        if let refusal = Self.refusal(authentication.factors, status) { return refusal }
        let prompt = prompts.prompt(for: authentication)
        guard prompt.isInteractive else {
            return .failed(
                .notInteractive,
                "authentication needs a prompt, and the keychain has none to show for \(prompts.appName) "
                    + "(it has no terminal)")
        }
        server.runningAuthentications.begin(context)
        defer { server.runningAuthentications.end(context) }
        // The simulated sensor is touched from an owner session, so it cannot prove the owner
        // for one (``KeychainRequest/openOwnerSessionByBiometry(timeout:)`` refuses it too).
        let biometryUsable =
            status.sensor != .none && !status.enrolledFingers.isEmpty && !status.isLockedOut && !status.passcodeRequired
            && !(purpose == .proveOwner && status.sensor == .simulated)
        if biometryUsable && authentication.factors != .passcode {
            switch try biometricPhase(prompt) {
            case .success: return .succeeded(status)
            case .failure(let failure, let message): return .failed(failure, message)
            case .fallBackToPasscode: break
            }
        }
        return try passcodePhase(prompt) ?? .succeeded(status)
    }

    /// Why `factors` cannot be used now, or nil when they can: what `canEvaluatePolicy` checks,
    /// in its order (``PolicyPreflight``), so that the two answer alike. For biometry, no
    /// sensor comes before no passcode: a machine without the hardware is told so whatever its
    /// passcode (iOS answers biometryNotAvailable there; which of the two it puts first when
    /// both hold is UNCONFIRMED, and the hardware first is the one a caller can act on).
    static func refusal(_ factors: OwnerAuthentication.Factors, _ status: BiometryStatus) -> Outcome? {
        if factors == .biometry, status.sensor == .none {
            return .failed(.biometryNotAvailable, "no fingerprint sensor is available")
        }
        guard status.passcodeSet else { return .failed(.passcodeNotSet, "no device passcode is set") }
        guard factors == .biometry else { return nil }
        guard !status.enrolledFingers.isEmpty else { return .failed(.biometryNotEnrolled, "no finger is enrolled") }
        if status.isLockedOut {
            return .failed(
                .biometryLockout,
                "Biometry is locked out after 5 failed matches; enter the device passcode to use it again.")
        }
        if status.passcodeRequired {
            return .failed(
                .biometryLockout,
                "The passcode is required before biometry can be used (after a restart, or 48 hours).")
        }
        return nil
    }

    private enum BiometricOutcome {
        case success
        case failure(OwnerAuthenticationFailure, String)
        case fallBackToPasscode
    }

    /// The app cancelled (`invalidate()`), or exited.
    private var isCancelled: Bool { server.runningAuthentications.isCancelled(context) || prompts.askerHasExited }

    private func biometricPhase(_ prompt: any AuthenticationPrompt) throws(KeychainError) -> BiometricOutcome {
        let fallback = authentication.fallbackTitle
        // The sensor learns that a prompt waits before the sheet asks for a touch: a touch
        // only answers a waiting prompt.
        _ = try? server.awaitBiometricMatch(timeout: 0, context: context, caller: caller)
        let session = prompt.present(sheet(asksForTouch: true, fallbackTitle: fallback))
        defer {
            try? server.endBiometricMatch()
            session.dismiss()
        }
        var failures = 0
        while true {
            if isCancelled { return .failure(.appCancel, "the app cancelled the authentication") }
            switch session.pressedButton() {
            case .cancel?: return .failure(.userCancel, "the user cancelled")
            case .fallback? where fallback != nil:
                return biometryOnly ? .failure(.userFallback, "the user chose the fallback") : .fallBackToPasscode
            default: break
            }
            let match: BiometricMatch
            do {
                match = try server.awaitBiometricMatch(timeout: 0.1, context: context, caller: caller)
            } catch {
                // The Enclave refuses matches once locked out.
                return biometryOnly ? .failure(.biometryLockout, error.message) : .fallBackToPasscode
            }
            switch match {
            case .noTouch: continue
            case .matched: return .success
            case .notMatched:
                failures += 1
                let status = try server.biometryStatus()
                if status.isLockedOut {
                    session.show(
                        "Not recognized. Too many failed touches: the fingerprint is locked until the passcode is "
                            + "entered.")
                    return biometryOnly ? .failure(.biometryLockout, "biometry is locked out") : .fallBackToPasscode
                }
                if failures >= Self.matchesPerEvaluation {
                    session.show(biometryOnly ? "Not recognized." : "Not recognized. Enter the passcode instead.")
                    return biometryOnly
                        ? .failure(.authenticationFailed, "the fingerprint was not recognized") : .fallBackToPasscode
                }
                // Tries left: in this sheet, and before the lockout across sheets.
                let here = Self.matchesPerEvaluation - failures
                let beforeLockout = BiometryStatus.lockoutThreshold - status.consecutiveFailures
                let left = min(here, beforeLockout)
                let lockout =
                    beforeLockout <= here ? " before the fingerprint is locked until the passcode is entered" : ""
                session.show("Not recognized. \(left) more \(left == 1 ? "try" : "tries")\(lockout).")
            }
        }
    }

    /// Nil when the passcode was right; the failure otherwise.
    private func passcodePhase(_ prompt: any AuthenticationPrompt) throws(KeychainError) -> Outcome? {
        let session = prompt.present(sheet(asksForTouch: false, fallbackTitle: nil))
        defer { session.dismiss() }
        while true {
            // During a delay after failed attempts, say how long, count down, and take no input.
            if let stopped = try waitOutDelay(session) { return stopped }
            guard let passcode = session.readPasscode(shouldStop: { isCancelled }) else {
                return isCancelled
                    ? .failed(.appCancel, "the app cancelled the authentication")
                    : .failed(.userCancel, "the user cancelled")
            }
            do {
                // The passcode typed to unlock, or to prove the owner (`owner login`), unlocks: the
                // owner who gave it meant to use the keychain (issue 53: a session opened on a
                // locked keychain served nothing).
                if purpose == .authorizeContext {
                    try server.verifyPasscode(passcode, context: context, caller: caller)
                } else {
                    try server.unlock(passcode: passcode)
                }
                return nil
            } catch KeychainError.errSecAuthFailed {
                session.show("Wrong passcode. Try again.")
            } catch KeychainError.errSecInteractionNotAllowed {
                continue
            } catch {
                session.show(error.message)
                return .failed(.authenticationFailed, error.message)
            }
        }
    }

    /// Counts down a passcode delay on the sheet (Esc still cancels; other keys are ignored);
    /// nil once the passcode may be entered.
    private func waitOutDelay(_ session: any PromptSession) throws(KeychainError) -> Outcome? {
        var waited = false
        while true {
            let status = try server.enclave.status()
            guard status.secondsUntilNextAttempt > 0 else { break }
            if isCancelled { return .failed(.appCancel, "the app cancelled the authentication") }
            if session.pressedButton() == .cancel { return .failed(.userCancel, "the user cancelled") }
            let seconds = Int(status.secondsUntilNextAttempt.rounded(.up))
            session.update(
                "\(status.failedAttempts) wrong passcodes. Try again in "
                    + "\(seconds / 60):\(String(format: "%02d", seconds % 60)).")
            waited = true
            usleep(200_000)
        }
        if waited { session.show("You can enter the passcode now.") }
        return nil
    }

    private func sheet(asksForTouch: Bool, fallbackTitle: String?) -> PromptSheet {
        PromptSheet(
            programName: prompts.appName, reason: authentication.reason, asksForTouch: asksForTouch,
            cancelTitle: authentication.cancelTitle.isEmpty ? "Cancel" : authentication.cancelTitle,
            fallbackTitle: fallbackTitle)
    }
}
