import Foundation
import KeychainProtocol

// Apple's status codes (SecBase.h), for code that compares `OSStatus` values.

/// No error.
public let errSecSuccess: OSStatus = 0
/// Function or operation not implemented.
public let errSecUnimplemented: OSStatus = -4
/// The disk is full.
public let errSecDiskFull: OSStatus = -34
/// I/O error.
public let errSecIO: OSStatus = -36
/// One or more parameters passed to a function were not valid.
public let errSecParam: OSStatus = -50
/// Failed to allocate memory.
public let errSecAllocate: OSStatus = -108
/// User canceled the operation.
public let errSecUserCanceled: OSStatus = -128
/// Bad parameter or invalid state for operation.
public let errSecBadReq: OSStatus = -909
/// An internal component failed.
public let errSecInternalComponent: OSStatus = -2070
/// A required entitlement isn't present (the access group is not the caller's).
public let errSecMissingEntitlement: OSStatus = -34018
/// No keychain is available.
public let errSecNotAvailable: OSStatus = -25291
/// The keychain cannot be modified.
public let errSecReadOnly: OSStatus = -25292
/// The user name or passphrase is not correct.
public let errSecAuthFailed: OSStatus = -25293
/// The keychain could not be found.
public let errSecNoSuchKeychain: OSStatus = -25294
/// The keychain is not valid (its files cannot be trusted).
public let errSecInvalidKeychain: OSStatus = -25295
/// The item already exists.
public let errSecDuplicateItem: OSStatus = -25299
/// The item could not be found.
public let errSecItemNotFound: OSStatus = -25300
/// The data is too large.
public let errSecDataTooLarge: OSStatus = -25302
/// The attribute does not exist.
public let errSecNoSuchAttr: OSStatus = -25303
/// Not a valid keychain item class.
public let errSecNoSuchClass: OSStatus = -25306
/// User interaction is not allowed (the keychain is locked, or no prompt may be shown).
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The attribute could not be modified.
public let errSecReadOnlyAttr: OSStatus = -25309
/// Unable to decode the provided data.
public let errSecDecode: OSStatus = -26275
/// A cryptographic verification failure has occurred.
public let errSecVerifyFailed: OSStatus = -67808

/// Apple's sentence for a status code, as `Security` gives it.
///
/// For example, `SecCopyErrorMessageString(errSecItemNotFound, nil)` is
/// "The specified item could not be found in the keychain."
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1394686-seccopyerrormessagestring>
@discardableResult
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    KeychainError.standardMessage(for: status).map { $0 as NSString }
}

extension KeychainError {
    /// The error for a status a Security function returned, when one function of this module
    /// calls another: Apple's sentence for it, after `context` when given.
    init(failedStatus status: OSStatus, _ context: String? = nil) {
        let sentence = Self.standardMessage(for: status) ?? "status \(status)"
        self.init(status: status, message: context.map { "\($0): \(sentence)" } ?? sentence)
    }
}
