// The idiom of wrappers that turn an OSStatus into text: a switch over SecBase.h's constants
// (those a keychain call never returns included), and SecCopyErrorMessageString for the rest.
import Foundation
import Security

enum StatusMessages {
    static func describe(_ status: OSStatus) -> String {
        switch status {
        case errSecSuccess: return "ok"
        case errSecUnimplemented, errSecIO, errSecOpWr, errSecWrPerm, errSecDiskFull: return "system"
        case errSecInternalError, errSecInternalComponent, errSecCoreFoundationUnknown: return "internal"
        case errSecNotAvailable, errSecInteractionNotAllowed, errSecInteractionRequired: return "unavailable"
        case errSecMissingEntitlement, errSecRestrictedAPI, errSecNoAccessForItem: return "not allowed"
        case errSecItemNotFound, errSecInvalidItemRef: return "not found"
        default:
            return SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
        }
    }

    /// The switch, and Apple's sentences for codes it does not name.
    static func describesEveryKind() -> Bool {
        describe(errSecOpWr) == "system" && describe(-49) == "system" && describe(errSecInternalError) == "internal"
            && describe(errSecRestrictedAPI) == "not allowed"
            && describe(errSecDuplicateItem) == "The specified item already exists in the keychain."
            && describe(errSSLClosedGraceful) == "connection closed gracefully"
            && describe(errSecCertificateExpired) == "An expired certificate was detected."
            && describe(12345) == "OSStatus 12345"
    }
}
