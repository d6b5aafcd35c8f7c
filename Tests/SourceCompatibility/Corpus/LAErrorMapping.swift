// The idiom of wrappers that map an LocalAuthentication error through the C constants of
// LAErrorConstants.h, as Objective-C-era code and many Swift wrappers still do.
import Foundation
import LocalAuthentication

enum LAErrorMapping {
    static func describe(_ error: NSError) -> String {
        guard error.domain == kLAErrorDomain else { return "other" }
        switch Int32(error.code) {
        case kLAErrorUserCancel, kLAErrorSystemCancel, kLAErrorAppCancel: return "cancelled"
        case kLAErrorUserFallback: return "fallback"
        case kLAErrorBiometryNotAvailable, kLAErrorBiometryNotEnrolled, kLAErrorPasscodeNotSet: return "unavailable"
        case kLAErrorBiometryLockout: return "locked out"
        case kLAErrorAuthenticationFailed: return "failed"
        default: return "other"
        }
    }

    /// The mapping of the errors `LAContext` gives, as the app sees them.
    static func mapsTheContextsErrors() -> Bool {
        let cases: [(LAError.Code, String)] = [
            (.userCancel, "cancelled"), (.userFallback, "fallback"), (.biometryNotEnrolled, "unavailable"),
            (.biometryLockout, "locked out"), (.authenticationFailed, "failed"), (.invalidContext, "other"),
        ]
        return cases.allSatisfy { code, expected in
            describe(NSError(domain: LAErrorDomain, code: code.rawValue)) == expected
        }
    }
}
