import Crypto
import Foundation

/// A digest computed elsewhere (the caller's, for the `ecdsaSignatureDigestX962…` algorithms
/// and for a use of an Enclave key), handed to ECDSA as is: swift-crypto signs and checks a
/// digest's bytes, whatever their length.
public struct PrecomputedDigest: Digest {
    /// Not a fixed size: ECDSA reads the bytes, never this.
    public static var byteCount: Int { 0 }

    /// The digest.
    public let bytes: Data

    /// A digest of these bytes.
    public init(bytes: Data) {
        self.bytes = bytes
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    public func makeIterator() -> Data.Iterator {
        bytes.makeIterator()
    }

    public var description: String { "digest of \(bytes.count) bytes" }
}
