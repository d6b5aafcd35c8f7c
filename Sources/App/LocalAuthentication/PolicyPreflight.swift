import Foundation
import KeychainClient

/// What `canEvaluatePolicy` checks, and `evaluatePolicy` before it asks the keychain: the state
/// a policy needs (passcode set, sensor present, finger enrolled, not locked out). The keychain
/// checks the same again when it draws the sheet.
enum PolicyPreflight {
    /// Checks what the policy needs, as `canEvaluatePolicy` does.
    static func check(_ policy: LAPolicy) -> Result<BiometryStatus, LAError> {
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
}
