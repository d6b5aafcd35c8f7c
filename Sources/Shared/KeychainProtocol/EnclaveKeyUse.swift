import Foundation

/// What an Enclave key does for a caller: the only two things a P-256 private key that never
/// leaves the Enclave is for.
public enum EnclaveKeyOperation: Sendable, Hashable {
    /// An ECDSA signature (X9.62 DER) over a digest the caller computed; a digest longer than
    /// the curve's order is truncated, as ECDSA does.
    case sign(digest: Data)
    /// The raw ECDH shared secret with the other party's public key (X9.63, 65 bytes).
    case keyAgreement(peerPublicKey: Data)

    /// The longest digest: SHA-512's.
    public static let maximumDigest = 64
    /// The size of a P-256 public key in X9.63 form.
    public static let publicKeySize = 65
}

/// A request to use an Enclave key: the key in the sealed form the Enclave made it in (which
/// only the Enclave can open), what to do with it, and the context whose evaluations may
/// satisfy the key's access control.
public struct EnclaveKeyUse: Sendable, Hashable {
    /// The key as ``KeychainRequest/createEnclaveKey(accessibility:accessControl:)`` answered it.
    public var sealedKey: Data
    /// What to do.
    public var operation: EnclaveKeyOperation
    /// `kSecUseAuthenticationContext` (or the key's CryptoKit `authenticationContext`), by name.
    public var authenticationContext: AuthenticationContextID?

    /// The largest sealed key a request may carry.
    public static let maximumSealedKey = 1024

    /// Creates a use.
    public init(sealedKey: Data, operation: EnclaveKeyOperation, authenticationContext: AuthenticationContextID? = nil)
    {
        self.sealedKey = sealedKey
        self.operation = operation
        self.authenticationContext = authenticationContext
    }
}
