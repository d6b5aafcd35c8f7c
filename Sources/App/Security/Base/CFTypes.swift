import Foundation

// Core Foundation's names as Swift code written for iOS spells them. On Apple platforms each CF
// type is a class toll-free bridged to its Foundation counterpart; here each *is* that Foundation
// class, so the same idioms compile and behave the same on Linux:
//
//     var result: AnyObject?                                  // or CFTypeRef?
//     SecItemCopyMatching(query as CFDictionary, &result)     // [String: Any] as NSDictionary
//     let data = result as? Data                              // NSData bridges to Data
//     let query: [String: AnyObject] = [kSecClass as String: kSecClassGenericPassword]

/// A status code, as in `Security`: 0 for success, an `errSec…` value otherwise.
public typealias OSStatus = Int32
/// A string (`kSecClass`, …): `NSString`, which converts with `as String` and is an object.
public typealias CFString = NSString
/// A query or attribute dictionary: `NSDictionary`; `[String: Any]` converts with `as`.
public typealias CFDictionary = NSDictionary
/// Any Core Foundation object: what a keychain call returns (`NSData`, `NSDictionary`,
/// `NSArray`, `NSString`, `NSNumber`, `NSDate`, `SecAccessControl`).
public typealias CFTypeRef = AnyObject
/// Bytes: `NSData`, which bridges to `Data`.
public typealias CFData = NSData
/// An array: `NSArray`, which bridges to `[Any]`.
public typealias CFArray = NSArray
/// A boolean: an `NSNumber` holding true or false, which bridges to `Bool`.
public typealias CFBoolean = NSNumber
/// A number: `NSNumber`.
public typealias CFNumber = NSNumber
/// A date: `NSDate`, which bridges to `Date`.
public typealias CFDate = NSDate
/// Option bits, as `CFOptionFlags` (an unsigned long on Apple's 64-bit platforms).
public typealias CFOptionFlags = UInt
/// A count or index, as `CFIndex` (a signed long).
public typealias CFIndex = Int
/// An allocator argument, accepted and ignored (`kCFAllocatorDefault`, `nil`).
public typealias CFAllocator = Never?

/// `true`, as Core Foundation's implicitly unwrapped constant (iOS code writes `kCFBooleanTrue!`
/// or passes it as is).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// `false`, as Core Foundation's implicitly unwrapped constant.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
/// The default allocator: nil.
public let kCFAllocatorDefault: CFAllocator = nil
/// Success, as the classic Mac OS constant `noErr` that iOS code still compares against.
public let noErr: OSStatus = 0
