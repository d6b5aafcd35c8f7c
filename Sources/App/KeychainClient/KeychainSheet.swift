/// Owner authentications on the keychain's own sheet for the keychain's own requests: unlocking
/// (``KeychainDevice/unlock(reason:)``) and opening an owner session
/// (``KeychainRequest/openOwnerSessionBySheet(_:)``). keychaind draws the sheet where it draws an
/// app's (the program's terminal or desktop, or the user's prompt agent) and reads the passcode
/// itself: it never enters this process.
public enum KeychainSheet {
    /// Sends `request` (``KeychainRequest/unlockBySheet(_:)`` or
    /// ``KeychainRequest/openOwnerSessionBySheet(_:)``) and returns once the owner authenticated.
    ///
    /// - Throws: errSecUserCanceled (-128) when the owner cancels, errSecInteractionNotAllowed
    ///   (-25308) when no sheet can be shown, errSecNotAvailable (-25291) when no passcode is set,
    ///   errSecAuthFailed (-25293) when the authentication failed.
    public static func perform(_ request: KeychainRequest) throws(KeychainError) {
        switch try ProcessKeychain.perform(request) {
        case .biometry: return
        case .authenticationFailed(let failure, let message): throw error(failure, message)
        // Never the reply itself in the message: a reply of another kind may carry a secret.
        default: throw KeychainError(.errSecInternalComponent, "the keychain answered out of turn")
        }
    }

    /// What the sheet asks: `factors`, and `reason` under the program's name.
    public static func authentication(_ factors: OwnerAuthentication.Factors, reason: String) -> OwnerAuthentication {
        OwnerAuthentication(
            factors: factors, reason: reason, cancelTitle: "Cancel",
            fallbackTitle: factors == .biometryOrPasscode ? "Enter Passcode" : nil, context: .random())
    }

    /// The keychain's code for why an authentication did not succeed.
    static func error(_ failure: OwnerAuthenticationFailure, _ message: String) -> KeychainError {
        switch failure {
        case .userCancel, .appCancel, .userFallback: KeychainError(.errSecUserCanceled, message)
        case .notInteractive: KeychainError(.errSecInteractionNotAllowed, message)
        case .passcodeNotSet: KeychainError(.errSecNotAvailable, message)
        case .authenticationFailed, .biometryNotAvailable, .biometryNotEnrolled, .biometryLockout:
            KeychainError(.errSecAuthFailed, message)
        }
    }
}
