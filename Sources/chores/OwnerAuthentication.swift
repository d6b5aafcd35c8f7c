import Foundation
import Keychain
import Synchronization

/// The guide's `AuthenticateMe`: biometry first (canEvaluatePolicy, then evaluatePolicy with the
/// reason), and the app's own fallback — the device passcode through deviceOwnerAuthentication —
/// when biometry is unavailable, fails, or the user picks "Enter Password".
enum OwnerAuthentication {
    /// The outcome, in words for the status line.
    struct Outcome {
        var granted: Bool
        var message: String
    }

    static func authenticate(reason: String) -> Outcome {
        let context = LAContext()
        var error: NSError?
        if context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) {
            switch evaluate(context, .deviceOwnerAuthenticationWithBiometrics, reason) {
            case nil:
                return Outcome(granted: true, message: "Authenticated with your fingerprint.")
            case .userCancel?:
                return Outcome(granted: false, message: "Cancelled: nothing was changed.")
            case let code?:
                return fallback(reason, because: code == .userFallback ? "You chose the passcode." : "Fingerprint not recognized (\(code)).")
            }
        }
        let why = error.map { LAError(_nsError: $0).message } ?? "Biometry is not available."
        return fallback(reason, because: why)
    }

    /// The app's fallback, as the guide asks apps to provide.
    private static func fallback(_ reason: String, because why: String) -> Outcome {
        let context = LAContext()
        context.localizedFallbackTitle = "Enter Passcode"
        switch evaluate(context, .deviceOwnerAuthentication, reason) {
        case nil: return Outcome(granted: true, message: "\(why) Authenticated with the device passcode.")
        case .userCancel?: return Outcome(granted: false, message: "\(why) Cancelled: nothing was changed.")
        case .passcodeNotSet?: return Outcome(granted: false, message: "No device passcode is set; restart chores to set one.")
        case let code?: return Outcome(granted: false, message: "\(why) Authentication failed (\(code)): nothing was changed.")
        }
    }

    /// Runs an evaluation and waits for its reply; nil on success.
    private static func evaluate(_ context: LAContext, _ policy: LAPolicy, _ reason: String) -> LAError.Code? {
        let outcome = Mutex<LAError.Code??>(nil)
        let done = DispatchSemaphore(value: 0)
        context.evaluatePolicy(policy, localizedReason: reason) { success, error in
            outcome.withLock { $0 = .some(success ? nil : (error as? LAError)?.code ?? .authenticationFailed) }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0 } ?? .authenticationFailed
    }
}

