import Foundation
import Keychain
import Synchronization

/// The guide's `AuthenticateMe`: biometry first (canEvaluatePolicy, then evaluatePolicy with the
/// reason), and the app's own fallback — the device passcode through deviceOwnerAuthentication —
/// when biometry is unavailable, fails, or the user picks "Enter Passcode".
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
                // The same context: it goes straight to the passcode field.
                return fallback(context, reason, because: words(for: code))
            }
        }
        return fallback(
            context, reason,
            because: error.map { words(for: LAError.Code(rawValue: $0.code) ?? .biometryNotAvailable) } ?? "")
    }

    /// The app's fallback, as the guide asks apps to provide: the device passcode.
    private static func fallback(_ context: LAContext, _ reason: String, because why: String) -> Outcome {
        let why = why.isEmpty ? "" : why + " "
        switch evaluate(context, .deviceOwnerAuthentication, reason) {
        case nil: return Outcome(granted: true, message: "\(why)Authenticated with the device passcode.")
        case .userCancel?: return Outcome(granted: false, message: "\(why)Cancelled: nothing was changed.")
        case .passcodeNotSet?:
            return Outcome(granted: false, message: "No device passcode is set; restart chores to set one.")
        case let code?: return Outcome(granted: false, message: "\(why)\(words(for: code)) Nothing was changed.")
        }
    }

    /// What happened, in the user's words (never an enum name, never a command to run).
    static func words(for code: LAError.Code) -> String {
        switch code {
        case .userFallback: "You chose the passcode."
        case .authenticationFailed: "The fingerprint was not recognized."
        case .biometryLockout: "Too many failed touches: the fingerprint is locked until the passcode is entered."
        case .biometryNotEnrolled: "No fingerprint is enrolled."
        case .biometryNotAvailable: "No fingerprint reader is available."
        case .passcodeNotSet: "No device passcode is set."
        case .notInteractive: "Authentication needs a terminal."
        case .userCancel, .appCancel, .systemCancel: "Cancelled."
        default: "Authentication did not succeed."
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
