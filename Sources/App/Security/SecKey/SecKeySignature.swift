import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport
import _CryptoExtras

/// A signature algorithm this version makes and checks, read from Apple's name.
struct SignatureScheme {
    enum Family {
        /// ECDSA, signature in X9.62 DER.
        case ecdsaX962
        /// ECDSA, signature as `r ‖ s` (RFC 4754).
        case ecdsaRFC4754
        /// RSA with PKCS #1 v1.5 or PSS padding.
        case rsa(_RSA.Signing.Padding)
    }

    enum Input {
        /// The algorithm hashes the message.
        case message(SecKeyHash)
        /// The caller hashed it; with a hash named, the digest must be that long (Apple:
        /// "bad digest size for signing with algorithm", errSecParam).
        case digest(SecKeyHash?)
    }

    let family: Family
    let input: Input

    /// nil for a name that is not a signature algorithm this version supports.
    init?(_ algorithm: SecKeyAlgorithm) {
        let parts = (algorithm.rawValue as String).split(separator: ":")
        guard parts.count >= 3, parts[0] == "algid", parts[1] == "sign" else { return nil }
        let hash = parts.count > 4 ? SecKeyHash(parts[4]) : nil
        switch (parts[2], parts[3], parts.count) {
        case ("ECDSA", "RFC4754", 4):
            (family, input) = (.ecdsaRFC4754, .digest(nil))
        case ("ECDSA", "digest-X962", 4):
            (family, input) = (.ecdsaX962, .digest(nil))
        case ("ECDSA", "digest-X962", 5):
            guard let hash else { return nil }
            (family, input) = (.ecdsaX962, .digest(hash))
        case ("ECDSA", "message-X962", 5):
            guard let hash else { return nil }
            (family, input) = (.ecdsaX962, .message(hash))
        case ("RSA", "message-PKCS1v15", 5):
            guard let hash else { return nil }
            (family, input) = (.rsa(.insecurePKCS1v1_5), .message(hash))
        // PSS names carry the MGF1 hash and the salt length, which are the digest's.
        case ("RSA", "message-PSS", 7):
            guard let hash else { return nil }
            (family, input) = (.rsa(.PSS), .message(hash))
        default:
            return nil
        }
    }

    /// Whether the scheme signs with keys of this kind.
    func fits(_ key: SecKey.PublicKey) -> Bool {
        switch (family, key) {
        case (.rsa, .rsa): true
        case (.rsa, _), (_, .rsa): false
        default: true
        }
    }

    /// The bytes ECDSA signs: the message's digest or the caller's.
    fileprivate func ecdsaDigest(of data: Data) throws(KeychainError) -> PrecomputedDigest {
        switch input {
        case .message(let hash):
            return hash.withDigest(of: data) { PrecomputedDigest(bytes: Data($0)) }
        case .digest(let hash?) where data.count != hash.byteCount:
            throw KeychainError(
                .errSecParam,
                "bad digest size for signing: \(data.count) bytes where the algorithm's hash gives \(hash.byteCount)")
        case .digest:
            return PrecomputedDigest(bytes: data)
        }
    }
}

extension SecKey {
    /// Signs `data` under `scheme` with this private key.
    ///
    /// - Throws: `errSecParam` for a public key, a scheme of another kind of key or a digest of
    ///   the wrong length.
    func sign(_ data: Data, _ scheme: SignatureScheme) throws(KeychainError) -> Data {
        guard let privateKey, scheme.fits(publicKey) else {
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
        do {
            switch (privateKey, scheme.family) {
            case (.rsa(let key), .rsa(let padding)):
                guard case .message(let hash) = scheme.input else {
                    throw KeychainError(.errSecParam, "algorithm not supported by the key")
                }
                return try hash.withDigest(of: data) { try key.signature(for: $0, padding: padding).rawRepresentation }
            case (.p256(let key), let family):
                let signature = try key.signature(for: scheme.ecdsaDigest(of: data))
                return family.isRFC4754 ? signature.rawRepresentation : signature.derRepresentation
            case (.p384(let key), let family):
                let signature = try key.signature(for: scheme.ecdsaDigest(of: data))
                return family.isRFC4754 ? signature.rawRepresentation : signature.derRepresentation
            case (.p521(let key), let family):
                let signature = try key.signature(for: scheme.ecdsaDigest(of: data))
                return family.isRFC4754 ? signature.rawRepresentation : signature.derRepresentation
            case (.enclave(let key), let family):
                let signature = try key.signature(for: scheme.ecdsaDigest(of: data).bytes)
                return family.isRFC4754 ? signature.rawRepresentation : signature.derRepresentation
            default:
                throw KeychainError(.errSecParam, "algorithm not supported by the key")
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecParam, "the key could not sign: \(error)")
        }
    }

    /// Whether `signature` over `data` is valid under `scheme` for this public key.
    ///
    /// - Throws: `errSecParam` for a private key, a scheme of another kind of key or a digest
    ///   of the wrong length.
    func verify(_ signature: Data, of data: Data, _ scheme: SignatureScheme) throws(KeychainError) -> Bool {
        guard privateKey == nil, scheme.fits(publicKey) else {
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
        /// The signature read as `r ‖ s` (RFC 4754) or DER, as the scheme says, and checked over
        /// the scheme's digest of `data`; false when it is not a signature at all.
        func ecdsa<Signature: ECDSASignatureEncodings>(
            _: Signature.Type, _ isValid: (Signature, PrecomputedDigest) -> Bool
        ) throws(KeychainError) -> Bool {
            let digest = try scheme.ecdsaDigest(of: data)
            let parsed =
                scheme.family.isRFC4754
                ? try? Signature(rawRepresentation: signature) : try? Signature(derRepresentation: signature)
            return parsed.map { isValid($0, digest) } ?? false
        }
        switch (publicKey, scheme.family) {
        case (.rsa(let key), .rsa(let padding)):
            guard case .message(let hash) = scheme.input else {
                throw KeychainError(.errSecParam, "algorithm not supported by the key")
            }
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return hash.withDigest(of: data) { key.isValidSignature(parsed, for: $0, padding: padding) }
        case (.p256(let key), _):
            return try ecdsa(P256.Signing.ECDSASignature.self) { key.isValidSignature($0, for: $1) }
        case (.p384(let key), _):
            return try ecdsa(P384.Signing.ECDSASignature.self) { key.isValidSignature($0, for: $1) }
        case (.p521(let key), _):
            return try ecdsa(P521.Signing.ECDSASignature.self) { key.isValidSignature($0, for: $1) }
        default:
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
    }
}

extension SignatureScheme.Family {
    fileprivate var isRFC4754: Bool {
        if case .ecdsaRFC4754 = self { return true }
        return false
    }
}

/// The ECDSA signatures of the three curves, which read both encodings a scheme may name: `r ‖ s`
/// (RFC 4754) and X9.62 DER.
private protocol ECDSASignatureEncodings {
    init<D: DataProtocol>(rawRepresentation: D) throws
    init<D: DataProtocol>(derRepresentation: D) throws
}

extension P256.Signing.ECDSASignature: ECDSASignatureEncodings {}
extension P384.Signing.ECDSASignature: ECDSASignatureEncodings {}
extension P521.Signing.ECDSASignature: ECDSASignatureEncodings {}
