import Crypto
import Foundation
import KeychainProtocol
import SwiftASN1
import X509

/// An X.509 certificate, as `SecCertificateCreateWithData` makes it from DER.
///
/// An object, as on Apple platforms: two are equal when their DER is. Parsing is
/// swift-certificates'.
public final class SecCertificate: Sendable, Hashable {
    /// The certificate's DER, exactly as given.
    let der: Data
    /// The parsed certificate.
    let certificate: Certificate

    init?(der: Data) {
        guard let certificate = try? Certificate(derEncoded: Array(der)) else { return nil }
        self.der = der
        self.certificate = certificate
    }

    public static func == (lhs: SecCertificate, rhs: SecCertificate) -> Bool {
        lhs.der == rhs.der
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(der)
    }

    /// `CSSM_CERT_ENCODING_DER`, the encoding of every certificate here.
    static let derEncoding: Int64 = 3

    /// The attributes a certificate item takes from its certificate, as iOS derives them
    /// (`kSecAttrCertificateType`, `…Encoding`, `kSecAttrSubject`, `kSecAttrIssuer`,
    /// `kSecAttrSerialNumber`, `kSecAttrSubjectKeyID`, `kSecAttrPublicKeyHash`, and the subject
    /// summary as `kSecAttrLabel`).
    ///
    /// The subject and issuer are the DER of the names as the certificate holds them. iOS keeps
    /// a normalized form (case and spaces folded, UNCONFIRMED byte for byte); a query that
    /// takes these values from `SecItemCopyMatching`'s attributes finds the item either way.
    var itemAttributes: [String: AttributeValue] {
        var attributes = identifyingAttributes
        attributes[kSecAttrCertificateEncoding as String] = .number(Self.derEncoding)
        attributes[kSecAttrSubject as String] = .data(Self.der(of: certificate.subject))
        attributes[kSecAttrPublicKeyHash as String] = .data(publicKeyHash)
        if let identifier = try? certificate.extensions.subjectKeyIdentifier {
            attributes[kSecAttrSubjectKeyID as String] = .data(Data(identifier.keyIdentifier))
        }
        if let summary = subjectSummary { attributes[kSecAttrLabel as String] = .string(summary) }
        return attributes
    }

    /// The attributes that name this certificate among a group's items: its primary key
    /// (``ItemClass/primaryKey``), type, issuer and serial number.
    var identifyingAttributes: [String: AttributeValue] {
        [
            kSecAttrCertificateType as String: .number(Int64(certificate.version == .v1 ? 1 : 3)),
            kSecAttrIssuer as String: .data(Self.der(of: certificate.issuer)),
            kSecAttrSerialNumber as String: .data(Data(certificate.serialNumber.bytes)),
        ]
    }

    /// The SHA-1 of the public key's bits (the subjectPublicKey BIT STRING's contents), as
    /// Apple's `kSecAttrPublicKeyHash` and a key's `kSecAttrApplicationLabel`.
    var publicKeyHash: Data {
        // swift-certificates' `subjectPublicKeyInfoBytes` is that BIT STRING's contents.
        Data(Insecure.SHA1.hash(data: certificate.publicKey.subjectPublicKeyInfoBytes))
    }

    /// The values of the name's attributes of `type`, in order.
    static func values(_ name: DistinguishedName, _ type: ASN1ObjectIdentifier) -> [String] {
        name.flatMap { $0 }.filter { $0.type == type }.map { String(describing: $0.value) }
    }

    /// The e-mail addresses in the subject and its alternative names.
    var emailAddresses: [String] {
        var addresses = Self.values(certificate.subject, .RDNAttributeType.emailAddress)
        for name in (try? certificate.extensions.subjectAlternativeNames) ?? SubjectAlternativeNames() {
            if case .rfc822Name(let address) = name, !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }

    /// What `SecCertificateCopySubjectSummary` says: the subject's last common name, else its
    /// first e-mail address, else its organizational unit or organization, else the whole
    /// subject. UNCONFIRMED beyond the common name, which is what Apple's documentation and
    /// usual certificates show.
    var subjectSummary: String? {
        let subject = certificate.subject
        if let name = Self.values(subject, .RDNAttributeType.commonName).last { return name }
        if let address = emailAddresses.first { return address }
        if let unit = Self.values(subject, .RDNAttributeType.organizationalUnitName).first { return unit }
        if let organization = Self.values(subject, .RDNAttributeType.organizationName).first { return organization }
        let whole = String(describing: subject)
        return whole.isEmpty ? nil : whole
    }

    private static func der(of name: DistinguishedName) -> Data {
        var serializer = DER.Serializer()
        do {
            try serializer.serialize(name)
        } catch {
            return Data()
        }
        return Data(serializer.serializedBytes)
    }
}

/// Makes a certificate from its DER encoding.
///
/// - Returns: nil when `data` is not one DER-encoded X.509 certificate.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1396073-seccertificatecreatewithdata>
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    SecCertificate(der: data as Data)
}

/// The certificate's DER encoding.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1396080-seccertificatecopydata>
@discardableResult
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(data: certificate.der)
}

/// A human-readable summary of the certificate's subject: its common name, as a rule.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1394814-seccertificatecopysubjectsummary>
@discardableResult
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    certificate.subjectSummary.map { $0 as NSString }
}

/// The subject's common name (the last, when there are several).
///
/// - Returns: `errSecSuccess`, with nil in `commonName` when the subject has none.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1394366-seccertificatecopycommonname>
@discardableResult
public func SecCertificateCopyCommonName(
    _ certificate: SecCertificate, _ commonName: UnsafeMutablePointer<CFString?>
) -> OSStatus {
    commonName.pointee = SecCertificate.values(certificate.certificate.subject, .RDNAttributeType.commonName).last.map {
        $0 as NSString
    }
    return errSecSuccess
}

/// The e-mail addresses of the subject and its alternative names.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1396115-seccertificatecopyemailaddresses>
@discardableResult
public func SecCertificateCopyEmailAddresses(
    _ certificate: SecCertificate, _ emailAddresses: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    emailAddresses.pointee = NSArray(array: certificate.emailAddresses.map { $0 as NSString })
    return errSecSuccess
}

/// The certificate's serial number: the big-endian bytes of its DER INTEGER.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/2867915-seccertificatecopyserialnumberdata>
@discardableResult
public func SecCertificateCopySerialNumberData(
    _ certificate: SecCertificate, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    NSData(data: Data(certificate.certificate.serialNumber.bytes))
}
