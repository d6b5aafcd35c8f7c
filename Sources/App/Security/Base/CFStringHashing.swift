import Foundation

/// A `CFString` in an `AnyHashable` equals the same text as a Swift `String`, as on Apple
/// platforms, where an `NSString` hashes as the `String` it bridges to.
///
/// iOS code keeps attributes in `[AnyHashable: Any]` and looks them up with the constants
/// themselves (`attributes[kSecAttrAccount] as? Data`). The dictionary a query returns bridges
/// with `String` keys, so without this the lookup by the `NSString` constant finds nothing on
/// Linux, whose Foundation gives `NSData`, `NSUUID` and a few others this conversion but not
/// `NSString`.
///
/// The conformance is process-wide: once this module is linked, every `NSString` in an
/// `AnyHashable` compares equal to its `String`, which is what Apple's Foundation does.
extension NSString: @retroactive _HasCustomAnyHashableRepresentation {
    /// The string's Swift `String`, as the hashable form of the object.
    public func _toCustomAnyHashable() -> AnyHashable? {
        AnyHashable(self as String)
    }
}
