/// A random number generator for `SecRandomCopyBytes`; only the default one exists.
public typealias SecRandomRef = OpaquePointer

/// The default random number generator: the system's (`getrandom(2)`).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes.
///
/// As on Apple platforms, the usual call is
/// `SecRandomCopyBytes(kSecRandomDefault, key.count, &key)`. The bytes come from the kernel's
/// random number generator (`getrandom(2)`, through `SystemRandomNumberGenerator`).
///
/// - Returns: `errSecSuccess`; `errSecParam` for a generator other than `kSecRandomDefault`.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/secrandomcopybytes(_:_:_:)>
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard rnd == nil, count >= 0 else { return errSecParam }
    var generator = SystemRandomNumberGenerator()
    var filled = 0
    while filled < count {
        let word = generator.next()
        let take = min(MemoryLayout<UInt64>.size, count - filled)
        withUnsafeBytes(of: word) { (bytes + filled).copyMemory(from: $0.baseAddress!, byteCount: take) }
        filled += take
    }
    return errSecSuccess
}
