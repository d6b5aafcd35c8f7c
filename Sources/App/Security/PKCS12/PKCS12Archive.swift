import Crypto
import Foundation
import KeychainProtocol
import SwiftASN1
import _CryptoExtras

/// The private keys and certificates of a PKCS #12 file (RFC 7292), its integrity MAC checked.
///
/// Read with swift-asn1 as DER (what OpenSSL, Apple's and Java's tools write; a file with BER's
/// indefinite lengths is errSecDecode). The MAC is HMAC with SHA-1/256/384/512 keyed by
/// ``PKCS12KeyDerivation``; the encrypted parts are decrypted by ``PKCS12Encryption``. Bags other than
/// keys and X.509 certificates (CRLs, secrets, nested contents) are skipped.
struct PKCS12Archive {
    /// What a bag's attributes say about it.
    struct BagAttributes {
        /// `friendlyName`: the name the exporter gave (`openssl pkcs12 -name`).
        var friendlyName: String?
        /// `localKeyId`: the same bytes on a key and its certificate.
        var localKeyID: Data?
    }

    /// A private key and its attributes.
    struct KeyBag {
        let key: SecKey
        let attributes: BagAttributes
    }

    /// A certificate and its attributes.
    struct CertificateBag {
        let certificate: SecCertificate
        let attributes: BagAttributes
    }

    private(set) var keys: [KeyBag] = []
    private(set) var certificates: [CertificateBag] = []

    private static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    private static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 6]
    private static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 1]
    private static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 2]
    private static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 3]
    private static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 22, 1]
    private static let friendlyName: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 20]
    private static let localKeyID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 21]

    private let passphrase: String
    /// Whether a MAC vouched for the passphrase: then a part that does not decrypt is damage
    /// (errSecDecode), not a wrong passphrase (errSecAuthFailed).
    private var macVerified = false

    /// Opens `der` with `passphrase`.
    ///
    /// - Throws: errSecAuthFailed for a wrong passphrase; errSecDecode for data that is not a
    ///   PKCS #12 file; errSecUnimplemented for a cipher or MAC this keychain does not support.
    init(der: Data, passphrase: String) throws(KeychainError) {
        self.passphrase = passphrase
        do {
            try read(DER.parse(Array(der)))
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecDecode, "the data is not a PKCS #12 file (DER, RFC 7292)")
        }
    }

    private mutating func read(_ root: ASN1Node) throws {
        let (authenticatedSafe, macData) = try DER.sequence(root, identifier: .sequence) { nodes in
            guard try Int(derEncoded: &nodes) == 3 else {
                throw KeychainError(.errSecDecode, "the file is not a version 3 PKCS #12 file")
            }
            guard let contentInfo = nodes.next() else { throw KeychainError(.errSecDecode, "the file has no contents") }
            let (type, content) = try Self.contentInfo(contentInfo)
            guard type == Self.data, let content else {
                throw KeychainError(
                    .errSecUnimplemented,
                    "the file's contents are protected by public-key integrity, which this keychain does not "
                        + "support; passphrase integrity is"
                )
            }
            return (try ASN1OctetString(derEncoded: content).bytes, nodes.next())
        }
        if let macData {
            try verifyMAC(macData, of: authenticatedSafe)
            macVerified = true
        }
        try DER.sequence(try DER.parse(authenticatedSafe), identifier: .sequence) { contents in
            while let contentInfo = contents.next() {
                let (type, content) = try Self.contentInfo(contentInfo)
                guard let content else { continue }
                if type == Self.data {
                    try readSafeContents(ASN1OctetString(derEncoded: content).bytes)
                } else if type == Self.encryptedData {
                    var plaintext = try decryptEncryptedData(content)
                    defer { plaintext.resetBytes(in: 0..<plaintext.count) }
                    try readSafeContents(ArraySlice(plaintext))
                } else {
                    throw KeychainError(
                        .errSecUnimplemented,
                        "the file has contents encrypted to a public key, which this keychain does not support; "
                            + "passphrase encryption is"
                    )
                }
            }
        }
    }

    // MARK: Integrity

    private static let macHashes: [ASN1ObjectIdentifier: any HashFunction.Type] = [
        [1, 3, 14, 3, 2, 26]: Insecure.SHA1.self, [2, 16, 840, 1, 101, 3, 4, 2, 1]: SHA256.self,
        [2, 16, 840, 1, 101, 3, 4, 2, 2]: SHA384.self, [2, 16, 840, 1, 101, 3, 4, 2, 3]: SHA512.self,
    ]

    private func verifyMAC(_ node: ASN1Node, of content: ArraySlice<UInt8>) throws {
        let (algorithm, mac, salt, iterations) = try DER.sequence(node, identifier: .sequence) { nodes in
            let (algorithm, mac) = try DER.sequence(try Self.next(&nodes), identifier: .sequence) { digestInfo in
                (
                    try Self.algorithmIdentifier(try Self.next(&digestInfo)).0,
                    try ASN1OctetString(derEncoded: &digestInfo).bytes
                )
            }
            let salt = try ASN1OctetString(derEncoded: &nodes).bytes
            let iterations = try DER.decodeDefault(&nodes, identifier: .integer, defaultValue: 1) {
                try Int(derEncoded: $0)
            }
            return (algorithm, Array(mac), Array(salt), iterations)
        }
        guard let hash = Self.macHashes[algorithm] else {
            throw KeychainError(
                .errSecUnimplemented,
                "the file's integrity MAC uses a hash this keychain does not support (\(algorithm))")
        }
        guard (1...PKCS12KeyDerivation.maximumIterations).contains(iterations) else {
            throw KeychainError(
                .errSecDecode,
                "the file asks for \(iterations) MAC iterations; at most \(PKCS12KeyDerivation.maximumIterations) "
                    + "are accepted"
            )
        }
        func isValid<Hash: HashFunction>(_ hash: Hash.Type) -> Bool {
            PKCS12KeyDerivation.isValidMAC(
                hash, mac, of: Array(content), salt: salt, iterations: iterations, passphrase: passphrase)
        }
        guard isValid(hash) else {
            throw KeychainError(
                .errSecAuthFailed,
                "the passphrase is wrong, or the file was changed: its integrity MAC does not check out")
        }
    }

    // MARK: Contents

    private var wrongPassphrase: KeychainError {
        macVerified
            ? KeychainError(
                .errSecDecode, "a part of the file does not decrypt although its MAC checks out: the file is damaged")
            : KeychainError(.errSecAuthFailed, "the passphrase is wrong: the file does not decrypt")
    }

    private func decryptEncryptedData(_ node: ASN1Node) throws -> Data {
        try DER.sequence(node, identifier: .sequence) { nodes in
            _ = try Int(derEncoded: &nodes)
            return try DER.sequence(try Self.next(&nodes), identifier: .sequence) { info in
                _ = try ASN1ObjectIdentifier(derEncoded: &info)
                let algorithm = try Self.next(&info)
                let ciphertext: ASN1OctetString? = try DER.optionalImplicitlyTagged(
                    &info, tag: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific))
                return try PKCS12Encryption.decrypt(
                    ciphertext?.bytes ?? [], algorithm: algorithm, passphrase: passphrase,
                    wrongPassphrase: wrongPassphrase)
            }
        }
    }

    private mutating func readSafeContents(_ bytes: ArraySlice<UInt8>) throws {
        var bags: [(ASN1ObjectIdentifier, ASN1Node, BagAttributes)] = []
        try DER.sequence(try DER.parse(bytes), identifier: .sequence) { nodes in
            while let bag = nodes.next() {
                bags.append(try DER.sequence(bag, identifier: .sequence) { parts in
                    let type = try ASN1ObjectIdentifier(derEncoded: &parts)
                    let value = try DER.explicitlyTagged(&parts, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                    let attributes = try parts.next().map(Self.bagAttributes) ?? BagAttributes()
                    return (type, value, attributes)
                })
            }
        }
        for (type, value, attributes) in bags {
            if type == Self.keyBag {
                keys.append(KeyBag(key: try Self.privateKey(pkcs8: value.encodedBytes), attributes: attributes))
            } else if type == Self.shroudedKeyBag {
                var pkcs8 = try DER.sequence(value, identifier: .sequence) { nodes in
                    let algorithm = try Self.next(&nodes)
                    return try PKCS12Encryption.decrypt(
                        try ASN1OctetString(derEncoded: &nodes).bytes, algorithm: algorithm, passphrase: passphrase,
                        wrongPassphrase: wrongPassphrase)
                }
                defer { pkcs8.resetBytes(in: 0..<pkcs8.count) }
                keys.append(KeyBag(key: try Self.privateKey(pkcs8: ArraySlice(pkcs8)), attributes: attributes))
            } else if type == Self.certBag {
                let der = try DER.sequence(value, identifier: .sequence) { nodes -> ArraySlice<UInt8>? in
                    guard try ASN1ObjectIdentifier(derEncoded: &nodes) == Self.x509Certificate else {
                        _ = nodes.next()
                        return nil
                    }
                    return try DER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                        try ASN1OctetString(derEncoded: $0).bytes
                    }
                }
                guard let der else { continue }
                guard let certificate = SecCertificate(der: Data(der)) else {
                    throw KeychainError(.errSecDecode, "a certificate in the file is not an X.509 certificate")
                }
                certificates.append(CertificateBag(certificate: certificate, attributes: attributes))
            }
        }
    }

    private static func bagAttributes(_ node: ASN1Node) throws -> BagAttributes {
        var attributes = BagAttributes()
        try DER.set(node, identifier: .set) { nodes in
            while let attribute = nodes.next() {
                try DER.sequence(attribute, identifier: .sequence) { parts in
                    let type = try ASN1ObjectIdentifier(derEncoded: &parts)
                    try DER.set(try next(&parts), identifier: .set) { values in
                        if type == friendlyName {
                            let name = try ASN1BMPString(derEncoded: &values).bytes
                            let units = stride(from: name.startIndex, to: name.endIndex - 1, by: 2).map {
                                UInt16(name[$0]) << 8 | UInt16(name[$0 + 1])
                            }
                            attributes.friendlyName = String(decoding: units, as: UTF16.self)
                        } else if type == localKeyID {
                            attributes.localKeyID = Data(try ASN1OctetString(derEncoded: &values).bytes)
                        }
                        while values.next() != nil {}
                    }
                }
            }
        }
        return attributes
    }

    /// A PKCS #8 private key, read by swift-crypto: P-256, P-384, P-521 or RSA.
    private static func privateKey(pkcs8 der: ArraySlice<UInt8>) throws -> SecKey {
        if let key = try? P256.Signing.PrivateKey(derRepresentation: der) { return SecKey(.p256(key)) }
        if let key = try? P384.Signing.PrivateKey(derRepresentation: der) { return SecKey(.p384(key)) }
        if let key = try? P521.Signing.PrivateKey(derRepresentation: der) { return SecKey(.p521(key)) }
        if let key = try? _RSA.Signing.PrivateKey(derRepresentation: der) { return SecKey(.rsa(key)) }
        throw KeychainError(
            .errSecUnimplemented,
            "a private key in the file is of a type this keychain does not support; P-256, P-384, P-521 and RSA are")
    }

    // MARK: ASN.1 helpers

    /// A ContentInfo: its type and its `[0] EXPLICIT` content.
    private static func contentInfo(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1Node?) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            (
                try ASN1ObjectIdentifier(derEncoded: &nodes),
                try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
            )
        }
    }

    /// An AlgorithmIdentifier: its algorithm and its parameters, if any.
    static func algorithmIdentifier(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1Node?) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            (try ASN1ObjectIdentifier(derEncoded: &nodes), nodes.next())
        }
    }

    private static func next(_ nodes: inout ASN1NodeCollection.Iterator) throws -> ASN1Node {
        guard let node = nodes.next() else { throw KeychainError(.errSecDecode, "the file ends inside a structure") }
        return node
    }
}
