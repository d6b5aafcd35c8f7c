import Crypto
import Foundation
import KeychainClient
import KeychainProtocol

/// A P-256 private key inside the Enclave (`kSecAttrTokenIDSecureEnclave`): this process holds
/// only its sealed form, which only the Enclave opens, and its public key. Each signature and
/// each key agreement is a request to the keychain (keychaind, or the Enclave embedded in this
/// process), which checks the key's access group and access control and, when the control asks
/// for the owner, answers so that this process prompts through the key's `LAContext` and asks
/// again — exactly as reading a protected item does.
///
/// Embedded mode keeps the Enclave in this process, so there it guards against other programs
/// only as far as the embedded keychain does (Docs/SecurityModel.md); through keychaind the
/// private key is never in the app's memory.
struct EnclavePrivateKey: Sendable {
    /// The key as the Enclave sealed it: also its keychain item's data and CryptoKit's
    /// `dataRepresentation`.
    let sealedKey: Data
    let publicKey: P256.Signing.PublicKey
    /// How its uses authenticate: the context from `kSecUseAuthenticationContext`, when given.
    let authentication: AuthenticationOptions

    /// Makes a key inside the Enclave.
    ///
    /// - Throws: errSecInteractionNotAllowed when the keychain is locked; errSecNotAvailable
    ///   for an access control of `WhenPasscodeSet` with no passcode.
    static func create(
        accessibility: Accessibility, accessControl: AccessControl?, authentication: AuthenticationOptions
    ) throws(KeychainError) -> EnclavePrivateKey {
        guard
            case .enclaveKey(let sealedKey, let publicKey) = try ProcessKeychain.perform(
                .createEnclaveKey(accessibility: accessibility, accessControl: accessControl)),
            let key = try? P256.Signing.PublicKey(x963Representation: publicKey)
        else {
            throw KeychainError(.errSecInternalComponent, "the keychain's answer to making an Enclave key is not one")
        }
        return EnclavePrivateKey(sealedKey: sealedKey, publicKey: key, authentication: authentication)
    }

    /// The key a sealed form holds; nil for bytes that are not one.
    init?(sealedKey: Data, authentication: AuthenticationOptions = AuthenticationOptions()) {
        guard
            let publicKey = (try? SealedEnclaveKey(decoding: sealedKey)).flatMap({
                try? P256.Signing.PublicKey(x963Representation: $0.publicKey)
            })
        else { return nil }
        self.init(sealedKey: sealedKey, publicKey: publicKey, authentication: authentication)
    }

    private init(sealedKey: Data, publicKey: P256.Signing.PublicKey, authentication: AuthenticationOptions) {
        self.sealedKey = sealedKey
        self.publicKey = publicKey
        self.authentication = authentication
    }

    /// An ECDSA signature (DER) over `digest`.
    func signature(for digest: Data) throws(KeychainError) -> P256.Signing.ECDSASignature {
        let der = try perform(.sign(digest: digest))
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: der.copyData()) else {
            throw KeychainError(.errSecInternalComponent, "the Enclave's signature is not one")
        }
        return signature
    }

    /// The ECDH secret with `peer` (X9.63), as swift-crypto's `SharedSecret`.
    ///
    /// The Enclave answers with the secret's bytes: the X coordinate of the shared point.
    /// swift-crypto makes a `SharedSecret` only from an agreement, so this makes it from one
    /// whose result is that point: the key whose scalar is 1 agreeing with the point that has
    /// this X coordinate (either of the two: they share it).
    func sharedSecret(with peer: Data) throws(KeychainError) -> SharedSecret {
        var coordinate = try perform(.keyAgreement(peerPublicKey: peer)).copyData()
        defer { coordinate.resetBytes(in: 0..<coordinate.count) }
        do {
            let point = try P256.KeyAgreement.PublicKey(compressedRepresentation: [0x02] + coordinate)
            return try Self.identityScalar.sharedSecretFromKeyAgreement(with: point)
        } catch {
            throw KeychainError(.errSecInternalComponent, "the Enclave's shared secret is not a point's coordinate")
        }
    }

    /// The key whose scalar is 1: its agreement with a point is that point's X coordinate.
    private static let identityScalar = try! P256.KeyAgreement.PrivateKey(
        rawRepresentation: [UInt8](repeating: 0, count: 31) + [1])

    private func perform(_ operation: EnclaveKeyOperation) throws(KeychainError) -> SecretBytes {
        let reply = try AuthenticatedCall.perform(authentication) { material in
            .useEnclaveKey(
                EnclaveKeyUse(sealedKey: sealedKey, operation: operation, authenticationContext: material.context))
        }
        guard case .keyOutput(let bytes) = reply else {
            throw KeychainError(.errSecInternalComponent, "the keychain's answer to using an Enclave key is not one")
        }
        return bytes
    }
}
