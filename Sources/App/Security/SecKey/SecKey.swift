import Crypto
import Foundation
import KeychainProtocol
import _CryptoExtras

/// A key, as on Apple platforms: a public or a private key on a NIST curve (P-256, P-384,
/// P-521) or RSA, held in this process and used through swift-crypto.
///
/// A private key made here (`SecKeyCreateRandomKey`, `SecKeyCreateWithData`) lives in the
/// process's memory, as a software key does on iOS; one generated with
/// `kSecAttrTokenIDSecureEnclave` stays inside the Enclave (``EnclavePrivateKey``) and this
/// object only names it.
public final class SecKey: Sendable, Hashable {
    /// The public keys this version holds.
    enum PublicKey: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    /// The private keys this version holds.
    enum PrivateKey: Sendable {
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case p521(P521.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        case enclave(EnclavePrivateKey)

        var publicKey: PublicKey {
            switch self {
            case .p256(let key): .p256(key.publicKey)
            case .p384(let key): .p384(key.publicKey)
            case .p521(let key): .p521(key.publicKey)
            case .rsa(let key): .rsa(key.publicKey)
            case .enclave(let key): .p256(key.publicKey)
            }
        }
    }

    /// A key is one or the other; a private key's public half is derived from it.
    enum Material: Sendable {
        case publicKey(PublicKey)
        case privateKey(PrivateKey)
    }

    let material: Material

    init(_ material: Material) {
        self.material = material
    }

    convenience init(_ publicKey: PublicKey) {
        self.init(.publicKey(publicKey))
    }

    convenience init(_ privateKey: PrivateKey) {
        self.init(.privateKey(privateKey))
    }

    /// The public key: the key itself or the private key's public half.
    var publicKey: PublicKey {
        switch material {
        case .publicKey(let key): key
        case .privateKey(let key): key.publicKey
        }
    }

    /// The private key, for a private key.
    var privateKey: PrivateKey? {
        if case .privateKey(let key) = material { return key }
        return nil
    }

    /// Apple's external representation. For a public key, X9.63 (`04 ‖ X ‖ Y`) on a curve and
    /// the PKCS #1 `RSAPublicKey` DER for RSA; for a private key, X9.63 followed by the private
    /// scalar (`04 ‖ X ‖ Y ‖ K`) on a curve and the PKCS #1 `RSAPrivateKey` DER for RSA.
    ///
    /// - Throws: errSecUnimplemented for an Enclave key, whose private key is never given out
    ///   (iOS: "export not implemented for key"; its exact code is UNCONFIRMED).
    func externalRepresentation() throws(KeychainError) -> Data {
        switch material {
        case .publicKey(let key): Self.representation(of: key)
        case .privateKey(.p256(let key)): key.x963Representation
        case .privateKey(.p384(let key)): key.x963Representation
        case .privateKey(.p521(let key)): key.x963Representation
        case .privateKey(.rsa(let key)): key.derRepresentation
        case .privateKey(.enclave):
            throw KeychainError(
                .errSecUnimplemented,
                "export not implemented for an Enclave key: its private key never leaves the Enclave")
        }
    }

    /// What the key's keychain item holds: its external representation, or for an Enclave key
    /// the sealed form only the Enclave opens.
    var itemData: Data {
        if case .privateKey(.enclave(let key)) = material { return key.sealedKey }
        return (try? externalRepresentation()) ?? Data()
    }

    /// The Enclave key this is, if it is one.
    var enclaveKey: EnclavePrivateKey? {
        if case .privateKey(.enclave(let key)) = material { return key }
        return nil
    }

    /// The public key's external representation, whose SHA-1 is the key's application label.
    var publicKeyRepresentation: Data {
        Self.representation(of: publicKey)
    }

    private static func representation(of key: PublicKey) -> Data {
        switch key {
        case .p256(let key): key.x963Representation
        case .p384(let key): key.x963Representation
        case .p521(let key): key.x963Representation
        case .rsa(let key): key.pkcs1DERRepresentation
        }
    }

    /// `kSecAttrApplicationLabel`: the SHA-1 of the public key's external representation, as
    /// Apple computes it, the same for both halves of a pair.
    var applicationLabel: Data {
        Data(Insecure.SHA1.hash(data: publicKeyRepresentation))
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

    /// `SecKeyGetBlockSize`: the key's size in bytes (an RSA modulus; a curve's field, which
    /// is also the length of each half of an RFC 4754 signature, as Apple's adaptors use it).
    var blockSize: Int {
        (sizeInBits + 7) / 8
    }

    /// `kSecAttrKeyTypeECSECPrimeRandom` or `kSecAttrKeyTypeRSA`.
    var keyType: CFString {
        if case .rsa = publicKey { return kSecAttrKeyTypeRSA }
        return kSecAttrKeyTypeECSECPrimeRandom
    }

    /// `kSecAttrKeyClassPublic` or `kSecAttrKeyClassPrivate`.
    var keyClass: CFString {
        privateKey == nil ? kSecAttrKeyClassPublic : kSecAttrKeyClassPrivate
    }

    /// A key from Apple's external representation of one of `type` and `keyClass`
    /// (`kSecAttrKeyClassPublic` or `…Private`); nil when the bytes are not one.
    static func make(_ data: Data, type: String, keyClass: String) -> SecKey? {
        let isPrivate = keyClass == kSecAttrKeyClassPrivate as String
        guard isPrivate || keyClass == kSecAttrKeyClassPublic as String else { return nil }
        if type == kSecAttrKeyTypeRSA as String {
            // Apple takes RSA keys from 1024 bits; swift-crypto calls those "unsafe".
            if isPrivate {
                return (try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: data)).map { SecKey(.rsa($0)) }
            }
            return (try? _RSA.Signing.PublicKey(unsafeDERRepresentation: data)).map { SecKey(.rsa($0)) }
        }
        guard type == kSecAttrKeyTypeECSECPrimeRandom as String else { return nil }
        // The length names the curve, as Apple's X9.63 import does.
        switch (data.count, isPrivate) {
        case (65, false): return (try? P256.Signing.PublicKey(x963Representation: data)).map { SecKey(.p256($0)) }
        case (97, false): return (try? P384.Signing.PublicKey(x963Representation: data)).map { SecKey(.p384($0)) }
        case (133, false): return (try? P521.Signing.PublicKey(x963Representation: data)).map { SecKey(.p521($0)) }
        case (97, true): return (try? P256.Signing.PrivateKey(x963Representation: data)).map { SecKey(.p256($0)) }
        case (145, true): return (try? P384.Signing.PrivateKey(x963Representation: data)).map { SecKey(.p384($0)) }
        case (199, true): return (try? P521.Signing.PrivateKey(x963Representation: data)).map { SecKey(.p521($0)) }
        default: return nil
        }
    }

    /// Two keys are equal when they are the same key: same class, type and bytes.
    public static func == (lhs: SecKey, rhs: SecKey) -> Bool {
        lhs.keyClass == rhs.keyClass && lhs.keyType == rhs.keyType
            && lhs.publicKeyRepresentation == rhs.publicKeyRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(publicKeyRepresentation)
        hasher.combine(keyClass as String)
    }
}
