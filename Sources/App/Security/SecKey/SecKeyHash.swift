import Crypto
import Foundation

/// A hash named in a key algorithm (`…:SHA256`), among those swift-crypto offers.
enum SecKeyHash: Sendable {
    case sha1, sha256, sha384, sha512

    /// The hash named by an algorithm's part (`SHA256`); nil for one this version lacks
    /// (`SHA224`, `MD5`).
    init?(_ name: Substring) {
        switch name {
        case "SHA1": self = .sha1
        case "SHA256": self = .sha256
        case "SHA384": self = .sha384
        case "SHA512": self = .sha512
        default: return nil
        }
    }

    /// The digest's length in bytes.
    var byteCount: Int {
        switch self {
        case .sha1: Insecure.SHA1.byteCount
        case .sha256: SHA256.byteCount
        case .sha384: SHA384.byteCount
        case .sha512: SHA512.byteCount
        }
    }

    /// `body` applied to the message's digest, typed as swift-crypto types it (RSA padding
    /// needs the type to name the hash).
    func withDigest<Result>(of message: Data, _ body: (any Digest) throws -> Result) rethrows -> Result {
        switch self {
        case .sha1: try body(Insecure.SHA1.hash(data: message))
        case .sha256: try body(SHA256.hash(data: message))
        case .sha384: try body(SHA384.hash(data: message))
        case .sha512: try body(SHA512.hash(data: message))
        }
    }

    /// The ANSI X9.63 KDF with this hash over `secret`.
    func x963Derived(from secret: SharedSecret, sharedInfo: Data, byteCount: Int) -> SymmetricKey {
        switch self {
        case .sha1:
            secret.x963DerivedSymmetricKey(
                using: Insecure.SHA1.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha256:
            secret.x963DerivedSymmetricKey(using: SHA256.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha384:
            secret.x963DerivedSymmetricKey(using: SHA384.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        case .sha512:
            secret.x963DerivedSymmetricKey(using: SHA512.self, sharedInfo: sharedInfo, outputByteCount: byteCount)
        }
    }
}
