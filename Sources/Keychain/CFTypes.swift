import Foundation

// Core Foundation's names as Swift code written for iOS spells them, so that
// `query as CFDictionary`, `var result: CFTypeRef?` and `kSecClass as String` compile on Linux
// unchanged. Each is the Swift type that Core Foundation's bridges to.

/// A status code, as in `Security`: 0 for success, an `errSec…` value otherwise.
public typealias OSStatus = Int32
/// A string constant (`kSecClass`, …); bridges to `String`.
public typealias CFString = String
/// A query or attribute dictionary; `[String: Any]` (and `[CFString: Any]`) convert with `as`.
public typealias CFDictionary = [String: Any]
/// Any value a keychain call returns: `Data`, `[String: Any]` or an array of those.
public typealias CFTypeRef = Any
/// Bytes; bridges to `Data`.
public typealias CFData = Data
/// An array; bridges to `[Any]`.
public typealias CFArray = [Any]
/// A boolean; bridges to `Bool`.
public typealias CFBoolean = Bool
/// An allocator argument, accepted and ignored (`kCFAllocatorDefault`, `nil`).
public typealias CFAllocator = Never?

/// `true`, as Core Foundation's optional constant (iOS code writes `kCFBooleanTrue!`).
public let kCFBooleanTrue: CFBoolean? = true
/// `false`, as Core Foundation's optional constant.
public let kCFBooleanFalse: CFBoolean? = false
/// The default allocator: nil.
public let kCFAllocatorDefault: CFAllocator = nil
