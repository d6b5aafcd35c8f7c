import Foundation
import KeychainProtocol

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
