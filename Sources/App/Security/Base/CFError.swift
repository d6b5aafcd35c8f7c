import Foundation
import KeychainProtocol

/// An error object, as Core Foundation's `CFError`: an `NSError` here, as it is bridged on
/// Apple platforms, so `error.takeRetainedValue() as Error` works the same.
public typealias CFError = NSError
/// An error domain: a string.
public typealias CFErrorDomain = CFString

/// The domain of the errors whose code is an `OSStatus` (every error this package reports).
nonisolated(unsafe) public let kCFErrorDomainOSStatus: CFErrorDomain = "NSOSStatusErrorDomain"

/// An error's domain.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorgetdomain(_:)>
@discardableResult
public func CFErrorGetDomain(_ error: CFError!) -> CFErrorDomain! {
    error.domain as NSString
}

/// An error's code: for the Security errors, the `OSStatus`.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorgetcode(_:)>
@discardableResult
public func CFErrorGetCode(_ error: CFError!) -> CFIndex {
    error.code
}

/// An error's user info dictionary.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorcopyuserinfo(_:)>
@discardableResult
public func CFErrorCopyUserInfo(_ error: CFError!) -> CFDictionary! {
    error.userInfo as NSDictionary
}

/// A description of the error for a person: its localized description.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorcopydescription(_:)>
@discardableResult
public func CFErrorCopyDescription(_ error: CFError!) -> CFString! {
    error.localizedDescription as NSString
}

/// Why the error happened, when the error says (`NSLocalizedFailureReasonErrorKey`).
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorcopyfailurereason(_:)>
@discardableResult
public func CFErrorCopyFailureReason(_ error: CFError!) -> CFString! {
    error.localizedFailureReason.map { $0 as NSString }
}

/// A new error of `domain` with `code` and `userInfo`, as code that reports its own failures as
/// a `CFError` makes one (`CFErrorCreate(nil, kCFErrorDomainOSStatus, CFIndex(errSecParam), nil)`).
/// The allocator is ignored.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/cferrorcreate(_:_:_:_:)>
public func CFErrorCreate(
    _ allocator: CFAllocator?, _ domain: CFErrorDomain!, _ code: CFIndex, _ userInfo: CFDictionary!
) -> CFError! {
    NSError(
        domain: domain as String, code: code,
        userInfo: (userInfo as? [String: Any]) ?? [:])
}

/// The `CFError` for `error`: domain `NSOSStatusErrorDomain`, its status as the code and its
/// message as the description, as the Security functions with an error out-parameter give.
func osStatusError(_ error: KeychainError) -> CFError {
    NSError(
        domain: kCFErrorDomainOSStatus as String, code: Int(error.status),
        userInfo: [NSLocalizedDescriptionKey: error.message])
}
