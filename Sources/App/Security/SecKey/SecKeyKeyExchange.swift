import Crypto
import Foundation
import KeychainProtocol

/// A key-exchange algorithm this version supports, read from Apple's name: ECDH, raw or
/// through the ANSI X9.63 KDF. On NIST curves the cofactor is 1, so cofactor ECDH is
/// standard ECDH.
struct KeyExchangeScheme {
    /// nil: the shared secret's X coordinate as is.
    let kdfHash: SecKeyHash?

    init?(_ algorithm: SecKeyAlgorithm) {
        let parts = (algorithm.rawValue as String).split(separator: ":")
        guard parts.count >= 3, parts[0] == "algid", parts[1] == "keyexchange",
            parts[2] == "ECDH" || parts[2] == "ECDHC"
        else { return nil }
        switch parts.count {
        case 3:
            kdfHash = nil
        case 5 where parts[3] == "KDFX963":
            guard let hash = SecKeyHash(parts[4]) else { return nil }
            kdfHash = hash
        default:
            return nil
        }
    }
}

/// ECDH on swift-crypto's key-agreement keys, which share their bytes with the signing keys
/// a `SecKey` holds.
enum KeyAgreementKey {
    /// A fresh key on `recipient`'s curve: its public key (X9.63) and its secret with
    /// `recipient`.
    static func ephemeralAgreement(with recipient: SecKey.PublicKey) throws -> (Data, SharedSecret) {
        switch recipient {
        case .p256(let key):
            let ephemeral = P256.KeyAgreement.PrivateKey()
            return (
                ephemeral.publicKey.x963Representation,
                try ephemeral.sharedSecretFromKeyAgreement(with: .init(x963Representation: key.x963Representation))
            )
        case .p384(let key):
            let ephemeral = P384.KeyAgreement.PrivateKey()
            return (
                ephemeral.publicKey.x963Representation,
                try ephemeral.sharedSecretFromKeyAgreement(with: .init(x963Representation: key.x963Representation))
            )
        case .p521(let key):
            let ephemeral = P521.KeyAgreement.PrivateKey()
            return (
                ephemeral.publicKey.x963Representation,
                try ephemeral.sharedSecretFromKeyAgreement(with: .init(x963Representation: key.x963Representation))
            )
        case .rsa:
            throw KeychainError(.errSecParam, "algorithm not supported by the key")
        }
    }

    /// The secret of `privateKey` with the public key whose X9.63 bytes are `peer`; an Enclave
    /// key's comes from the Enclave.
    ///
    /// - Throws: `errSecParam` when `peer` is not a point of the same curve.
    static func agreement(of privateKey: SecKey.PrivateKey, with peer: Data) throws -> SharedSecret {
        do {
            switch privateKey {
            case .p256(let key):
                return try P256.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: .init(x963Representation: peer))
            case .p384(let key):
                return try P384.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: .init(x963Representation: peer))
            case .p521(let key):
                return try P521.KeyAgreement.PrivateKey(rawRepresentation: key.rawRepresentation)
                    .sharedSecretFromKeyAgreement(with: .init(x963Representation: peer))
            case .enclave(let key):
                return try key.sharedSecret(with: peer)
            case .rsa:
                throw KeychainError(.errSecParam, "algorithm not supported by the key")
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecParam, "the other public key is not a point of this key's curve")
        }
    }
}

extension SecKey {
    /// ECDH of this private key with `peer`'s public key, raw or through the X9.63 KDF.
    ///
    /// - Parameters:
    ///   - requestedSize: the KDF's output length (`kSecKeyKeyExchangeParameterRequestedSize`),
    ///     required with a KDF.
    ///   - sharedInfo: the KDF's shared info (`kSecKeyKeyExchangeParameterSharedInfo`).
    /// - Throws: `errSecParam` for a public key, an RSA key, a peer on another curve or a
    ///   missing requested size.
    func exchange(
        with peer: SecKey, _ scheme: KeyExchangeScheme, requestedSize: Int?, sharedInfo: Data
    ) throws(KeychainError) -> Data {
        guard let privateKey, case .none = peer.privateKey else {
            throw KeychainError(
                .errSecParam,
                "algorithm not supported by the key: ECDH takes a private key and the other party's public key")
        }
        let secret: SharedSecret
        do {
            secret = try KeyAgreementKey.agreement(of: privateKey, with: peer.publicKeyRepresentation)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecParam, "ECDH failed")
        }
        guard let hash = scheme.kdfHash else { return secret.withUnsafeBytes { Data($0) } }
        guard let requestedSize, requestedSize > 0, requestedSize <= 1 << 16 else {
            throw KeychainError(
                .errSecParam,
                "kSecKeyKeyExchangeParameterRequestedSize is required with an X9.63 KDF: the number of bytes to "
                    + "derive (1 to 65,536)"
            )
        }
        return hash.x963Derived(from: secret, sharedInfo: sharedInfo, byteCount: requestedSize).withUnsafeBytes {
            Data($0)
        }
    }
}
