import Crypto
import Foundation
import Keychain

/// An SSH key whose private key is an Enclave key (`ecdsa-sha2-nistp256`, RFC 5656): kept in the
/// keychain as a `kSecClassKey` item labelled with its name, used only inside the Enclave.
public struct SSHEnclaveKey: Sendable {
    /// The key's name: its item's label and its `authorized_keys` comment.
    public let name: String
    /// The Enclave key.
    let key: SecKey
    /// Its public key.
    public let publicKey: P256.Signing.PublicKey
    /// Whether its access control asks the owner (a touch or the passcode) before it signs.
    public let requiresAuthentication: Bool

    /// The algorithm name, which is also the key type in OpenSSH's files.
    public static let algorithm = "ecdsa-sha2-nistp256"

    init?(name: String, key: SecKey) {
        guard let publicKey = SecKeyCopyPublicKey(key).flatMap({ SecKeyCopyExternalRepresentation($0, nil) as Data? }),
            let p256 = try? P256.Signing.PublicKey(x963Representation: publicKey)
        else { return nil }
        self.name = name
        self.key = key
        self.publicKey = p256
        let attributes = SecKeyCopyAttributes(key) as? [String: Any]
        requiresAuthentication =
            (attributes?[kSecAttrAccessControl as String] as? SecAccessControl)?.accessControl.requiresAuthentication
            ?? false
    }

    /// The public key blob: `string "ecdsa-sha2-nistp256"`, `string "nistp256"`,
    /// `string Q` (X9.63).
    public var blob: Data {
        SSHEncoding.string(Self.algorithm) + SSHEncoding.string("nistp256")
            + SSHEncoding.string(publicKey.x963Representation)
    }

    /// The key as an `authorized_keys` line: type, base64 blob, name.
    public var authorizedKeysLine: String {
        "\(Self.algorithm) \(blob.base64EncodedString()) \(name)"
    }

    /// The fingerprint OpenSSH shows (``SSHFingerprint``).
    public var fingerprint: String {
        SSHFingerprint.of(blob: blob)
    }

    /// The SSH signature of `data`: `string "ecdsa-sha2-nistp256"` and `string (mpint r,
    /// mpint s)` over ECDSA with SHA-256, made in the Enclave, which asks the owner first when
    /// the key's access control says so.
    ///
    /// - Throws: the keychain's error when the Enclave refuses.
    func signature(for data: Data) throws(KeychainError) -> Data {
        var error: Unmanaged<CFError>?
        guard
            let raw = SecKeyCreateSignature(
                key, .ecdsaSignatureRFC4754, Data(SHA256.hash(data: data)) as CFData, &error) as Data?
        else {
            throw SSHKeyStore.keychainError(error)
        }
        let half = raw.count / 2
        let inner = SSHEncoding.mpint(unsigned: raw.prefix(half)) + SSHEncoding.mpint(unsigned: raw.suffix(half))
        return SSHEncoding.string(Self.algorithm) + SSHEncoding.string(inner)
    }
}
