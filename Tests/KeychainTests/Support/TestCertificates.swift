import Crypto
import Foundation
import Security
import SwiftASN1
import X509

/// Certificates made for the tests with swift-certificates: self-signed, or signed by another
/// name, each with a fresh P-256 key.
enum TestCertificates {
    /// A DER-encoded certificate for `commonName`.
    static func make(
        commonName: String?, organization: String = "Example", serial: [UInt8] = [0x01, 0x02, 0x03],
        email: String? = nil, issuer: String? = nil, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()
    ) throws -> Data {
        let subject = try DistinguishedName {
            if let commonName { CommonName(commonName) }
            OrganizationName(organization)
        }
        let issuerName = try issuer.map { name in try DistinguishedName { CommonName(name) } } ?? subject
        let publicKey = Certificate.PublicKey(key.publicKey)
        let extensions = try Certificate.Extensions {
            SubjectKeyIdentifier(hash: publicKey)
            if let email { SubjectAlternativeNames([.rfc822Name(email)]) }
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(bytes: serial), publicKey: publicKey,
            notValidBefore: Date(timeIntervalSinceNow: -60), notValidAfter: Date(timeIntervalSinceNow: 3600),
            issuer: issuerName, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
        return Data(try certificate.serializeAsPEM().derBytes)
    }

    /// A `SecCertificate` of ``make(commonName:organization:serial:email:issuer:key:)``'s.
    static func secCertificate(commonName: String, serial: UInt8, issuer: String) throws -> SecCertificate {
        let der = try make(commonName: commonName, serial: [serial], issuer: issuer)
        guard let certificate = SecCertificateCreateWithData(nil, der as CFData) else {
            throw CertificateError.notACertificate
        }
        return certificate
    }

    /// The SHA-1 of a certificate's public key bits, computed apart from the code under test:
    /// an uncompressed P-256 point is the last 65 bytes of its SubjectPublicKeyInfo.
    static func publicKeyHash(_ der: Data) throws -> Data {
        let certificate = try Certificate(derEncoded: Array(der))
        guard let point = P256.Signing.PublicKey(certificate.publicKey) else { throw CertificateError.notP256 }
        return Data(Insecure.SHA1.hash(data: point.x963Representation))
    }

    enum CertificateError: Error {
        case notACertificate
        case notP256
    }
}
