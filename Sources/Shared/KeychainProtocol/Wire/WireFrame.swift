/// How messages travel on the keychain's socket: each is a 32-bit big-endian length followed
/// by that many bytes, whose first byte is the protocol version.
///
/// A frame longer than the limit for its direction is refused before its body is read, so a
/// peer cannot make the other side allocate more than the limit.
public enum WireFrame {
    /// The protocol version this build speaks. A message of another version gets
    /// `errSecDecode`; a later version that changes the format changes this number.
    public static let version: UInt8 = 1
    /// The largest request: above the largest valid one (a 1 MiB secret and 1 MiB of
    /// attributes, ``KeychainLimits``).
    public static let maximumRequest = 4 << 20
    /// The largest reply (many items with their attributes).
    public static let maximumReply = 64 << 20
    /// Bytes of the length prefix.
    public static let headerSize = 4

    /// The length prefix for a body of `count` bytes.
    public static func header(_ count: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(clamping: count).bigEndian) { Array($0) }
    }

    /// The body length a prefix announces. Inlinable, so that a client reads it without
    /// instantiating the generic collection types at run time.
    @inlinable
    public static func bodyLength(_ header: some Collection<UInt8>) -> Int {
        header.prefix(headerSize).reduce(0) { $0 << 8 | Int($1) }
    }

    /// Reads and checks the version byte that starts every body.
    static func readVersion(_ reader: inout WireReader) throws(WireError) {
        let version = try reader.u8()
        guard version == Self.version else {
            throw WireError("protocol version \(version); this keychain speaks version \(Self.version)")
        }
    }
}
