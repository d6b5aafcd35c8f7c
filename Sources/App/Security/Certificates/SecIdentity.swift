import Foundation
import KeychainProtocol

/// A certificate with the private key of its public key, as on Apple platforms.
///
/// The keychain keeps an identity as two items, the certificate and the key, joined by the
/// certificate's `kSecAttrPublicKeyHash` being the key's `kSecAttrApplicationLabel`; a
/// `kSecClassIdentity` query finds the certificates that have such a key.
public final class SecIdentity: Hashable, Sendable {
    let certificate: SecCertificate
    let privateKey: SecKey

    init(certificate: SecCertificate, privateKey: SecKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    public static func == (lhs: SecIdentity, rhs: SecIdentity) -> Bool {
        lhs.certificate == rhs.certificate && lhs.privateKey == rhs.privateKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(certificate)
    }
}

/// The identity's certificate.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1401305-secidentitycopycertificate>
@discardableResult
public func SecIdentityCopyCertificate(
    _ identity: SecIdentity, _ out: UnsafeMutablePointer<SecCertificate?>
) -> OSStatus {
    out.pointee = identity.certificate
    return errSecSuccess
}

/// The identity's private key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1396099-secidentitycopyprivatekey>
@discardableResult
public func SecIdentityCopyPrivateKey(_ identity: SecIdentity, _ out: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    out.pointee = identity.privateKey
    return errSecSuccess
}
