import Crypto
import Foundation
import KeychainProtocol
import LocalAuthentication

/// CryptoKit's `SecureEnclave`, on this keychain's Enclave: P-256 keys made and used inside it
/// (through keychaind, or the Enclave embedded in the process), whose private key this process
/// never holds.
///
/// Code written for iOS compiles with `import Crypto` (swift-crypto, CryptoKit's API on Linux)
/// and `import Security` in place of `import CryptoKit`. The public keys and signatures are
/// swift-crypto's types; `dataRepresentation` is the key sealed to this keychain's Enclave, to
/// the caller's access group and to its access control, usable by no other keychain or app.
///
/// Errors are `NSError`s in `NSOSStatusErrorDomain` with the keychain's status (errSecUserCanceled,
/// errSecAuthFailed, errSecInteractionNotAllowed, errSecDecode for a `dataRepresentation` that is
/// not this Enclave's); which errors CryptoKit throws there is UNCONFIRMED.
public enum SecureEnclave {
    /// True: every keychain has an Enclave (the daemon's, or the one embedded in the process).
    public static var isAvailable: Bool { true }

    /// Keys on the P-256 curve, the only one the Enclave offers (as Apple's).
    public enum P256 {
        /// Keys that sign (ECDSA).
        public enum Signing {
            /// A signing key inside the Enclave.
            public struct PrivateKey: Sendable {
                let key: EnclavePrivateKey

                /// Makes a key inside the Enclave.
                ///
                /// - Parameters:
                ///   - compactRepresentable: Accepted; every Enclave key is compact
                ///     representable, so `publicKey.compactRepresentation` is never nil.
                ///   - accessControl: What each use must satisfy; by default (as CryptoKit's)
                ///     `.privateKeyUsage`, accessible when unlocked, this device only.
                ///   - authenticationContext: The context each use authenticates with (and
                ///     reuses); a new one per use when nil.
                public init(
                    compactRepresentable: Bool = true,
                    accessControl: SecAccessControl = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, nil)!,
                    authenticationContext: LAContext? = nil
                ) throws {
                    key = try EnclavePrivateKey.createThrowingNSError(
                        accessControl: accessControl, context: authenticationContext)
                }

                /// The key whose `dataRepresentation` this is.
                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws {
                    key = try EnclavePrivateKey.restoringThrowingNSError(
                        dataRepresentation, context: authenticationContext)
                }

                /// The public key.
                public var publicKey: Crypto.P256.Signing.PublicKey { key.publicKey }

                /// The key sealed to this keychain's Enclave: store it to use the key again.
                public var dataRepresentation: Data { key.sealedKey }

                /// Signs the SHA-256 digest of `data`.
                public func signature<D: DataProtocol>(for data: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    try signature(for: SHA256.hash(data: data))
                }

                /// Signs a digest.
                public func signature<D: Digest>(for digest: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    try throwingNSError { () throws(KeychainError) in try key.signature(for: Data(digest)) }
                }
            }
        }

        /// Keys that agree secrets (ECDH).
        public enum KeyAgreement {
            /// A key-agreement key inside the Enclave.
            public struct PrivateKey: Sendable {
                let key: EnclavePrivateKey

                /// Makes a key inside the Enclave, as a signing key's initializer does (see
                /// ``SecureEnclave/P256/Signing/PrivateKey``).
                public init(
                    compactRepresentable: Bool = true,
                    accessControl: SecAccessControl = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, nil)!,
                    authenticationContext: LAContext? = nil
                ) throws {
                    key = try EnclavePrivateKey.createThrowingNSError(
                        accessControl: accessControl, context: authenticationContext)
                }

                /// The key whose `dataRepresentation` this is.
                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws {
                    key = try EnclavePrivateKey.restoringThrowingNSError(
                        dataRepresentation, context: authenticationContext)
                }

                /// The public key.
                public var publicKey: Crypto.P256.KeyAgreement.PublicKey {
                    // The same point as the signing form: the conversion cannot fail.
                    try! Crypto.P256.KeyAgreement.PublicKey(x963Representation: key.publicKey.x963Representation)
                }

                /// The key sealed to this keychain's Enclave: store it to use the key again.
                public var dataRepresentation: Data { key.sealedKey }

                /// The secret this key shares with `publicKeyShare`'s owner: swift-crypto's
                /// `SharedSecret`, for its `x963DerivedSymmetricKey` and `hkdfDerivedSymmetricKey`.
                public func sharedSecretFromKeyAgreement(
                    with publicKeyShare: Crypto.P256.KeyAgreement.PublicKey
                ) throws -> SharedSecret {
                    try throwingNSError { () throws(KeychainError) in
                        try key.sharedSecret(with: publicKeyShare.x963Representation)
                    }
                }
            }
        }
    }
}

extension EnclavePrivateKey {
    fileprivate static func createThrowingNSError(
        accessControl: SecAccessControl, context: LAContext?
    ) throws -> EnclavePrivateKey {
        try throwingNSError { () throws(KeychainError) in
            try create(
                accessibility: accessControl.accessControl.protection, accessControl: accessControl.accessControl,
                authentication: AuthenticationOptions(context: context))
        }
    }

    fileprivate static func restoringThrowingNSError(_ data: Data, context: LAContext?) throws -> EnclavePrivateKey {
        guard let key = EnclavePrivateKey(sealedKey: data, authentication: AuthenticationOptions(context: context))
        else {
            throw osStatusError(KeychainError(.errSecDecode, "the data is not a key this keychain's Enclave made"))
        }
        return key
    }
}

/// Runs `body`, turning its keychain error into the `NSError` CryptoKit callers catch.
private func throwingNSError<Value>(_ body: () throws(KeychainError) -> Value) throws -> Value {
    do {
        return try body()
    } catch {
        throw osStatusError(error)
    }
}
