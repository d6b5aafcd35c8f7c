import Foundation

// The Core Foundation data functions keychain code calls: Apple's own sample code ("Storing
// CryptoKit Keys in the Keychain") turns a key's bytes into Data with
// CFDataCreateWithBytesNoCopy and kCFAllocatorNull, and C-minded code reads a result with
// CFDataGetBytePtr and CFDataGetLength. CFData is NSData here (see CFTypes.swift).

/// The allocator that frees nothing (`kCFAllocatorNull`); allocators are accepted and ignored.
public let kCFAllocatorNull: CFAllocator = nil

/// The key of a bundle's identifier in its information dictionary
/// (`Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String]`).
nonisolated(unsafe) public let kCFBundleIdentifierKey: CFString = "CFBundleIdentifier"

/// Data holding a copy of `length` bytes at `bytes`.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/1542359-cfdatacreate>
public func CFDataCreate(_ allocator: CFAllocator?, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard length >= 0 else { return nil }
    guard let bytes, length > 0 else { return NSData() }
    return NSData(bytes: bytes, length: length)
}

/// Data of `length` bytes at `bytes`. Apple's keeps using the caller's buffer (and frees it with
/// `bytesDeallocator` unless that is `kCFAllocatorNull`); this one copies the bytes and frees
/// nothing, so the data stays valid after the buffer is gone — which Apple's own sample code,
/// returning such data out of `withUnsafeBytes`, relies on by luck.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/1542218-cfdatacreatewithbytesnocopy>
public func CFDataCreateWithBytesNoCopy(
    _ allocator: CFAllocator?, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex, _ bytesDeallocator: CFAllocator?
) -> CFData! {
    CFDataCreate(allocator, bytes, length)
}

/// The number of bytes in `theData`.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/1541728-cfdatagetlength>
public func CFDataGetLength(_ theData: CFData!) -> CFIndex {
    theData.length
}

/// The bytes of `theData`, valid while it lives.
///
/// Apple documentation: <https://developer.apple.com/documentation/corefoundation/1543330-cfdatagetbyteptr>
public func CFDataGetBytePtr(_ theData: CFData!) -> UnsafePointer<UInt8>! {
    theData.bytes.assumingMemoryBound(to: UInt8.self)
}
