import Foundation

/// The SSH wire encoding (RFC 4251, section 5) of what the agent reads and writes: `uint32`,
/// `string` (a length and bytes), `byte`, `boolean` and `mpint`.
///
/// swift-nio-ssh has these for its own messages, but keeps the encoders of keys and signatures
/// internal and makes an ECDSA key only from a private key it holds, which an Enclave key never
/// is; so the few the agent protocol needs are here, and the tests check them against OpenSSH.
enum SSHEncoding {
    /// A `string`: its length (big-endian 32 bits), then its bytes.
    static func string(_ bytes: some Collection<UInt8>) -> Data {
        uint32(UInt32(bytes.count)) + Data(bytes)
    }

    /// A `string` of UTF-8 text.
    static func string(_ text: String) -> Data {
        string(Array(text.utf8))
    }

    /// A `uint32`, big-endian.
    static func uint32(_ value: UInt32) -> Data {
        Data([UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)])
    }

    /// An `mpint` of a non-negative integer given as big-endian bytes: without leading zero
    /// bytes, with one zero byte in front when the high bit is set (two's complement).
    static func mpint(unsigned bytes: some Collection<UInt8>) -> Data {
        var magnitude = Array(bytes.drop { $0 == 0 })
        if let first = magnitude.first, first & 0x80 != 0 { magnitude.insert(0, at: 0) }
        return string(magnitude)
    }
}

/// Reads the SSH wire encoding from bytes a client sent; every read checks what is left.
struct SSHReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = Array(bytes)
    }

    /// Whether everything was read.
    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() throws(SSHDecodingError) -> UInt8 {
        guard position < bytes.count else { throw SSHDecodingError() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() throws(SSHDecodingError) -> UInt32 {
        guard bytes.count - position >= 4 else { throw SSHDecodingError() }
        defer { position += 4 }
        return bytes[position..<(position + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func string() throws(SSHDecodingError) -> [UInt8] {
        let length = Int(try uint32())
        guard bytes.count - position >= length else { throw SSHDecodingError() }
        defer { position += length }
        return Array(bytes[position..<(position + length)])
    }

    mutating func boolean() throws(SSHDecodingError) -> Bool {
        try byte() != 0
    }
}

/// Bytes that are not the SSH encoding the message promised.
struct SSHDecodingError: Error {}
