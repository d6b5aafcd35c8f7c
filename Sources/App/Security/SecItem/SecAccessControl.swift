import Foundation
import KeychainProtocol

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

/// An access control object for `kSecAttrAccessControl`: an accessibility and the
/// authentication an item's data needs.
///
/// An object, as on Apple platforms: it goes in `[String: AnyObject]` and `[String: AnyHashable]`
/// dictionaries, and two are equal (and hash alike) when they say the same.
public final class SecAccessControl: Sendable, Hashable {
    /// The validated access control.
    public let accessControl: AccessControl

    init(_ accessControl: AccessControl) {
        self.accessControl = accessControl
    }

    public static func == (lhs: SecAccessControl, rhs: SecAccessControl) -> Bool {
        lhs.accessControl == rhs.accessControl
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(accessControl)
    }
}

/// Creates an access control object.
///
/// For example, the KeychainTouchID sample's item:
///
/// ```swift
/// var error: Unmanaged<CFError>?
/// let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault,
/// kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error)
/// ```
///
/// - Returns: nil with `error` set (domain `NSOSStatusErrorDomain`, code errSecParam) for an
///   unknown protection or an invalid combination of flags; see `AccessControl`.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1394452-secaccesscontrolcreatewithflags>
@discardableResult
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
        errorOut?.pointee = Unmanaged.passRetained(osStatusError(error))
        return nil
    }
}
