import Foundation

// Core Foundation's type checks, as keychain code writes them on a result it got as
// `CFTypeRef`: `CFGetTypeID(result) == SecKeyGetTypeID()`, then `unsafeDowncast(result, to:
// SecKey.self)`. The identifiers are this process's own, as Apple's are assigned at run time:
// code compares them and never stores them.

/// A Core Foundation type's identifier (`CFTypeID`, an unsigned long).
public typealias CFTypeID = UInt

/// The types a keychain result can be, each with its identifier.
private enum KnownType: CFTypeID {
    case other = 1, string, data, dictionary, array, boolean, number, date
    case key, certificate, identity, accessControl

    init(of object: AnyObject) {
        switch object {
        case is SecKey: self = .key
        case is SecCertificate: self = .certificate
        case is SecIdentity: self = .identity
        case is SecAccessControl: self = .accessControl
        case is NSString: self = .string
        case is NSData: self = .data
        case is NSDictionary: self = .dictionary
        case is NSArray: self = .array
        case let number as NSNumber:
            // Core Foundation's booleans are a type of their own (kCFBooleanTrue, `true`).
            self = number === kCFBooleanTrue || number === kCFBooleanFalse ? .boolean : .number
        case is NSDate: self = .date
        default: self = .other
        }
    }
}

/// The type identifier of `cf`.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/1521218-cfgettypeid>
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID { KnownType(of: cf).rawValue }

/// The type identifier of `SecKey`.
public func SecKeyGetTypeID() -> CFTypeID { KnownType.key.rawValue }
/// The type identifier of `SecCertificate`.
public func SecCertificateGetTypeID() -> CFTypeID { KnownType.certificate.rawValue }
/// The type identifier of `SecIdentity`.
public func SecIdentityGetTypeID() -> CFTypeID { KnownType.identity.rawValue }
/// The type identifier of `SecAccessControl`.
public func SecAccessControlGetTypeID() -> CFTypeID { KnownType.accessControl.rawValue }
/// The type identifier of `CFString`.
public func CFStringGetTypeID() -> CFTypeID { KnownType.string.rawValue }
/// The type identifier of `CFData`.
public func CFDataGetTypeID() -> CFTypeID { KnownType.data.rawValue }
/// The type identifier of `CFDictionary`.
public func CFDictionaryGetTypeID() -> CFTypeID { KnownType.dictionary.rawValue }
/// The type identifier of `CFArray`.
public func CFArrayGetTypeID() -> CFTypeID { KnownType.array.rawValue }
/// The type identifier of `CFBoolean` (`kCFBooleanTrue`, `kCFBooleanFalse`).
public func CFBooleanGetTypeID() -> CFTypeID { KnownType.boolean.rawValue }
/// The type identifier of `CFNumber`.
public func CFNumberGetTypeID() -> CFTypeID { KnownType.number.rawValue }
/// The type identifier of `CFDate`.
public func CFDateGetTypeID() -> CFTypeID { KnownType.date.rawValue }
