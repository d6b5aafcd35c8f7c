import Crypto
import Foundation
import KeychainProtocol
import _CryptoExtras

/// An encryption algorithm this version supports, read from Apple's name.
enum EncryptionScheme {
    /// RSA with PKCS #1 v1.5 or OAEP padding (OAEP with SHA-1 or SHA-256, which swift-crypto
    /// offers).
    case rsa(_RSA.Encryption.Padding)
    /// ECIES as Apple's `SecKeyAdaptors.m` builds it: an ephemeral key's ECDH with the
    /// recipient, the X9.63 KDF with `hash` over the ephemeral public key, and AES-GCM with a
    /// 16-byte tag. The AES key is 128 bits for keys up to 256 bits and 256 bits above; the
    /// 16-byte IV is all zeros, or derived after the key (`variableIV`). The packet is the
    /// ephemeral public key (X9.63) ‖ ciphertext ‖ tag.
    case ecies(hash: SecKeyHash, variableIV: Bool)

    /// nil for a name that is not an encryption algorithm this version supports.
    init?(_ algorithm: SecKeyAlgorithm) {
        let parts = (algorithm.rawValue as String).split(separator: ":")
        guard parts.count >= 3, parts[0] == "algid", parts[1] == "encrypt" else { return nil }
        switch (parts[2], parts.count) {
        case ("RSA", 4) where parts[3] == "PKCS1":
            self = .rsa(._WEAK_AND_INSECURE_PKCS_V1_5)
        case ("RSA", 5) where parts[3] == "OAEP" && parts[4] == "SHA1":
            self = .rsa(.PKCS1_OAEP)
        case ("RSA", 5) where parts[3] == "OAEP" && parts[4] == "SHA256":
            self = .rsa(.PKCS1_OAEP_SHA256)
        case ("ECIES", 7) where (parts[3] == "ECDH" || parts[3] == "ECDHC") && parts[4] == "KDFX963":
            // On NIST curves the cofactor is 1: cofactor ECDH is standard ECDH.
            guard let hash = SecKeyHash(parts[5]) else { return nil }
            switch parts[6] {
            case "AESGCM": self = .ecies(hash: hash, variableIV: false)
            case "AESGCM-KDFIV": self = .ecies(hash: hash, variableIV: true)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// Whether the scheme encrypts to keys of this kind.
    func fits(_ key: SecKey.PublicKey) -> Bool {
        switch (self, key) {
        case (.rsa, .rsa): true
        case (.ecies, .rsa), (.rsa, _): false
        case (.ecies, _): true
        }
    }
}

extension SecKey {
    /// `plaintext` encrypted to this public key.
    ///
    /// - Throws: `errSecParam` for a private key, a scheme of another kind of key or a
    ///   plaintext too long for RSA padding.
    func encrypt(_ plaintext: Data, _ scheme: EncryptionScheme) throws(KeychainError) -> Data {
        guard privateKey == nil, scheme.fits(publicKey) else {
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
        do {
            switch (scheme, publicKey) {
            case (.rsa(let padding), .rsa(let key)):
                let encryptionKey = try _RSA.Encryption.PublicKey(unsafeDERRepresentation: key.pkcs1DERRepresentation)
                return try encryptionKey.encrypt(plaintext, padding: padding)
            case (.ecies(let hash, let variableIV), let recipient):
                return try ECIES(hash: hash, variableIV: variableIV).seal(plaintext, to: recipient)
            default:
                throw KeychainError(.errSecParam, "algorithm not supported by the key")
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(
                .errSecParam, "the data could not be encrypted with this key and algorithm (too long for the key?)")
        }
    }

    /// `ciphertext` decrypted with this private key.
    ///
    /// - Throws: `errSecParam` for a public key, a scheme of another kind of key or a
    ///   ciphertext that does not decrypt (a wrong key, damaged data), as Apple's adaptors do.
    func decrypt(_ ciphertext: Data, _ scheme: EncryptionScheme) throws(KeychainError) -> Data {
        guard let privateKey, scheme.fits(publicKey) else {
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
        do {
            switch (scheme, privateKey) {
            case (.rsa(let padding), .rsa(let key)):
                let decryptionKey = try _RSA.Encryption.PrivateKey(unsafeDERRepresentation: key.derRepresentation)
                return try decryptionKey.decrypt(ciphertext, padding: padding)
            case (.ecies(let hash, let variableIV), let recipient):
                return try ECIES(hash: hash, variableIV: variableIV).open(ciphertext, with: recipient)
            default:
                throw KeychainError(.errSecParam, "algorithm not supported by the key")
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecParam, "the data does not decrypt with this key and algorithm")
        }
    }
}

/// Apple's ECIES on swift-crypto: see ``EncryptionScheme/ecies(hash:variableIV:)``.
private struct ECIES {
    let hash: SecKeyHash
    let variableIV: Bool

    private static let tagByteCount = 16
    private static let ivByteCount = 16

    func seal(_ plaintext: Data, to recipient: SecKey.PublicKey) throws -> Data {
        let (ephemeralPublicKey, secret) = try KeyAgreementKey.ephemeralAgreement(with: recipient)
        let (key, iv) = try keyAndIV(
            secret, ephemeralPublicKey: ephemeralPublicKey, fieldBytes: recipient.fieldByteCount)
        let box = try AES.GCM.seal(plaintext, using: key, nonce: iv)
        return ephemeralPublicKey + box.ciphertext + box.tag
    }

    func open(_ packet: Data, with recipient: SecKey.PrivateKey) throws -> Data {
        let fieldBytes = recipient.publicKey.fieldByteCount
        let publicKeyLength = 2 * fieldBytes + 1
        guard packet.count >= publicKeyLength + Self.tagByteCount else {
            throw KeychainError(.errSecParam, "ECIES: input data too short")
        }
        let bytes = Data(packet)
        let ephemeralPublicKey = bytes.prefix(publicKeyLength)
        let secret = try KeyAgreementKey.agreement(of: recipient, with: ephemeralPublicKey)
        let (key, iv) = try keyAndIV(secret, ephemeralPublicKey: ephemeralPublicKey, fieldBytes: fieldBytes)
        let box = try AES.GCM.SealedBox(
            nonce: iv, ciphertext: bytes.dropFirst(publicKeyLength).dropLast(Self.tagByteCount),
            tag: bytes.suffix(Self.tagByteCount))
        return try AES.GCM.open(box, using: key)
    }

    private func keyAndIV(
        _ secret: SharedSecret, ephemeralPublicKey: Data, fieldBytes: Int
    ) throws -> (SymmetricKey, AES.GCM.Nonce) {
        let keyByteCount = fieldBytes * 8 > 256 ? 32 : 16
        let derived = hash.x963Derived(
            from: secret, sharedInfo: ephemeralPublicKey, byteCount: keyByteCount + (variableIV ? Self.ivByteCount : 0))
        return try derived.withUnsafeBytes { bytes in
            let key = SymmetricKey(data: bytes.prefix(keyByteCount))
            let iv = variableIV ? Data(bytes.suffix(Self.ivByteCount)) : Data(repeating: 0, count: Self.ivByteCount)
            return (key, try AES.GCM.Nonce(data: iv))
        }
    }
}

extension SecKey.PublicKey {
    /// The curve's field size in bytes (its X9.63 public key is twice that plus one).
    var fieldByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        case .rsa(let key): (key.keySizeInBits + 7) / 8
        }
    }
}
