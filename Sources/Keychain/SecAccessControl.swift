import Foundation

/// `SecAccessControlCreateFlags`, with Apple's names and raw values.
public typealias SecAccessControlCreateFlags = AccessControlFlags

extension AccessControlFlags {
    /// The pre-iOS 11.3 name of `biometryAny`.
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = AccessControlFlags.biometryAny
    /// The pre-iOS 11.3 name of `biometryCurrentSet`.
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = AccessControlFlags.biometryCurrentSet
    /// The pre-iOS 18 name of `companion`.
    public static let watch = AccessControlFlags.companion
}

/// An error object, as Core Foundation's `CFError` (an `NSError` here).
public typealias CFError = NSError

/// An access control object for `kSecAttrAccessControl`: an accessibility and the
/// authentication an item's data needs.
public final class SecAccessControl: Sendable, Equatable {
    /// The validated access control.
    public let accessControl: AccessControl

    init(_ accessControl: AccessControl) {
        self.accessControl = accessControl
    }

    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.accessControl == rhs.accessControl
    }
}

/// Creates an access control object.
///
/// For example, the KeychainTouchID sample's item:
///
/// ```swift
/// var error: Unmanaged<CFError>?
/// let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error)
/// ```
///
/// - Returns: nil with `error` set (domain `NSOSStatusErrorDomain`, code errSecParam) for an
///   unknown protection or an invalid combination of flags; see `AccessControl`.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1394452-secaccesscontrolcreatewithflags>
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ errorOut: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    do throws(KeychainError) {
        guard let raw = protection as? String, let accessibility = Accessibility(rawValue: raw) else {
            throw KeychainError(.errSecParam, "protection must be one of the kSecAttrAccessible… constants")
        }
        return SecAccessControl(try AccessControl(protection: accessibility, flags: flags))
    } catch {
        let failure = NSError(domain: "NSOSStatusErrorDomain", code: Int(error.status), userInfo: [NSLocalizedDescriptionKey: error.message])
        errorOut?.pointee = Unmanaged.passRetained(failure)
        return nil
    }
}
