import Crypto
import Foundation
import KeychainProtocol
import _CryptoExtras

/// A key, as on Apple platforms.
///
/// This version holds public keys: a certificate's (`SecCertificateCopyKey`) or one made from
/// its external representation (`SecKeyCreateWithData`), and verifies signatures with them.
/// Private keys, key generation and keys as keychain items come with the Enclave's keys; asked
/// for, they fail with `errSecUnimplemented`.
public final class SecKey: Sendable, Hashable {
    /// The public keys this version holds: NIST curves and RSA, through swift-crypto.
    enum PublicKey: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    let publicKey: PublicKey

    init(_ publicKey: PublicKey) {
        self.publicKey = publicKey
    }

    /// Apple's external representation: X9.63 (`04 ‖ X ‖ Y`) for an elliptic-curve key, the
    /// PKCS #1 `RSAPublicKey` DER for an RSA key.
    var externalRepresentation: Data {
        switch publicKey {
        case .p256(let key): key.x963Representation
        case .p384(let key): key.x963Representation
        case .p521(let key): key.x963Representation
        case .rsa(let key): key.pkcs1DERRepresentation
        }
    }

    /// The key's size in bits.
    var sizeInBits: Int {
        switch publicKey {
        case .p256: 256
        case .p384: 384
        case .p521: 521
        case .rsa(let key): key.keySizeInBits
        }
    }

    /// `kSecAttrKeyTypeECSECPrimeRandom` or `kSecAttrKeyTypeRSA`.
    var keyType: CFString {
        if case .rsa = publicKey { return kSecAttrKeyTypeRSA }
        return kSecAttrKeyTypeECSECPrimeRandom
    }

    /// A public key from Apple's external representation of one of `type`; nil when the bytes
    /// are not one.
    static func publicKey(_ data: Data, type: String) -> SecKey? {
        if type == kSecAttrKeyTypeECSECPrimeRandom as String {
            // The length names the curve, as Apple's X9.63 import does.
            switch data.count {
            case 65: return (try? P256.Signing.PublicKey(x963Representation: data)).map { SecKey(.p256($0)) }
            case 97: return (try? P384.Signing.PublicKey(x963Representation: data)).map { SecKey(.p384($0)) }
            case 133: return (try? P521.Signing.PublicKey(x963Representation: data)).map { SecKey(.p521($0)) }
            default: return nil
            }
        }
        guard type == kSecAttrKeyTypeRSA as String else { return nil }
        // Apple takes RSA keys from 1024 bits; swift-crypto calls those "unsafe".
        return (try? _RSA.Signing.PublicKey(unsafeDERRepresentation: data)).map { SecKey(.rsa($0)) }
    }

    /// Whether this key verifies signatures made with `algorithm`: ECDSA for a curve key,
    /// PKCS #1 v1.5 or PSS for an RSA key.
    func verifies(with algorithm: SecKeyAlgorithm) -> Bool {
        guard let scheme = SignatureScheme(algorithm) else { return false }
        if case .rsa = publicKey { return scheme.padding != nil }
        return scheme.padding == nil
    }

    /// Whether `signature` over `message` is valid under `algorithm`; nil when this key does
    /// not verify with that algorithm.
    func verifies(_ signature: Data, of message: Data, _ algorithm: SecKeyAlgorithm) -> Bool? {
        guard verifies(with: algorithm), let scheme = SignatureScheme(algorithm) else { return nil }
        switch (publicKey, scheme.padding) {
        case (.p256(let key), nil):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return scheme.digest(message) { key.isValidSignature(parsed, for: $0) }
        case (.p384(let key), nil):
            guard let parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return scheme.digest(message) { key.isValidSignature(parsed, for: $0) }
        case (.p521(let key), nil):
            guard let parsed = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return scheme.digest(message) { key.isValidSignature(parsed, for: $0) }
        case (.rsa(let key), let padding?):
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return scheme.digest(message) { key.isValidSignature(parsed, for: $0, padding: padding) }
        default:
            return nil
        }
    }

    public static func == (lhs: SecKey, rhs: SecKey) -> Bool {
        lhs.keyType == rhs.keyType && lhs.externalRepresentation == rhs.externalRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(externalRepresentation)
    }
}

/// A signature algorithm's hash and, for RSA, its padding.
private struct SignatureScheme {
    enum Hash { case sha1, sha256, sha384, sha512 }
    let hash: Hash
    /// nil for ECDSA.
    let padding: _RSA.Signing.Padding?

    init?(_ algorithm: SecKeyAlgorithm) {
        let parts = (algorithm.rawValue as String).split(separator: ":")
        guard parts.count == 5, parts[0] == "algid", parts[1] == "sign" else { return nil }
        switch parts[4] {
        case "SHA1": hash = .sha1
        case "SHA256": hash = .sha256
        case "SHA384": hash = .sha384
        case "SHA512": hash = .sha512
        default: return nil
        }
        switch (parts[2], parts[3]) {
        case ("ECDSA", "message-X962"): padding = nil
        case ("RSA", "message-PKCS1v15"): padding = .insecurePKCS1v1_5
        case ("RSA", "message-PSS") where hash != .sha1: padding = .PSS
        default: return nil
        }
    }

    /// `check` applied to the message's digest.
    func digest(_ message: Data, _ check: (any Digest) -> Bool) -> Bool {
        switch hash {
        case .sha1: check(Insecure.SHA1.hash(data: message))
        case .sha256: check(SHA256.hash(data: message))
        case .sha384: check(SHA384.hash(data: message))
        case .sha512: check(SHA512.hash(data: message))
        }
    }
}
