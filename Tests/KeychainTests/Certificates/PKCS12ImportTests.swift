import Crypto
import Foundation
import Keychain
import Testing

@testable import Security

/// `SecPKCS12Import` against files the real `openssl pkcs12 -export` writes.
@Suite struct PKCS12ImportTests {
    /// A self-signed P-256 certificate and its key, as PEM files in `openssl`'s directory.
    private func makeIdentity(
        _ openssl: OpenSSLCommand, name: String = "p12test", key: String = "ec",
        keyOption: String = "ec_paramgen_curve:P-256"
    ) throws {
        try openssl.succeed([
            "req", "-x509", "-newkey", key, "-pkeyopt", keyOption, "-nodes", "-keyout", "\(name).key", "-out",
            "\(name).pem", "-subj", "/CN=\(name)", "-days", "2",
        ])
    }

    private func pem(_ openssl: OpenSSLCommand, _ name: String) throws -> Data {
        let text = String(decoding: try openssl.file(name), as: UTF8.self)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: body))
    }

    /// The published vectors of PKCS #12's key derivation for MAC keys (ID 3, SHA-1), as
    /// OpenSSL, Crypto++ and Bouncy Castle test it: "smeg" with one iteration, "queeg" with
    /// 1,000.
    @Test(arguments: [
        ("smeg", "3D83C0E4546AC140", 1, "8D967D88F6CAA9D714800AB3D48051D63F73A312"),
        ("queeg", "263216FCC2FAB31C", 1000, "5EC4C7A80DF652294C3925B6489A7AB857C83476"),
    ])
    func theMACKeyDerivationMatchesThePublishedVectors(
        password: String, salt: String, iterations: Int, expected: String
    ) {
        func bytes(_ hex: String) -> [UInt8] {
            stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        }
        let derived = PKCS12KeyDerivation.derive(
            Insecure.SHA1.self, password: PKCS12KeyDerivation.bmpPassword(password), salt: bytes(salt),
            iterations: iterations, purpose: .macKey, byteCount: 20)
        #expect(derived == bytes(expected))
    }

    private func importing(_ data: Data, _ options: [String: Any]) -> (OSStatus, [[String: Any]]?) {
        var items: CFArray?
        let status = SecPKCS12Import(data as CFData, options as NSDictionary, &items)
        return (status, items as? [[String: Any]])
    }

    @Test func anOpenSSLFileGivesItsIdentityThatSigns() throws {
        let openssl = try OpenSSLCommand()
        try makeIdentity(openssl)
        try openssl.succeed([
            "pkcs12", "-export", "-in", "p12test.pem", "-inkey", "p12test.key", "-out", "a.p12", "-passout",
            "pass:correct horse", "-name", "my identity",
        ])
        let (status, items) = importing(
            try openssl.file("a.p12"), [kSecImportExportPassphrase as String: "correct horse"])
        #expect(status == errSecSuccess)
        let item = try #require(items?.first)
        #expect(items?.count == 1)
        #expect(item[kSecImportItemLabel as String] as? String == "my identity")
        #expect(
            (item[kSecImportItemKeyID as String] as? Data)?.count == 20,
            "OpenSSL's local key ID is the certificate's SHA-1")
        #expect(item[kSecImportItemTrust as String] == nil)
        let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
        var certificate: SecCertificate?
        var key: SecKey?
        #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
        #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
        let certificateData = try #require(certificate.map { SecCertificateCopyData($0) as Data })
        #expect(certificateData == (try pem(openssl, "p12test.pem")))
        #expect((item[kSecImportItemCertChain as String] as? [SecCertificate])?.count == 1)

        // The key is the one openssl made: what it signs verifies with the certificate's key.
        let message = Data("imported".utf8)
        let privateKey = try #require(key)
        let signature = try #require(
            SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        let importedCertificate = try #require(certificate)
        let publicKey = try #require(SecCertificateCopyKey(importedCertificate))
        #expect(
            SecKeyVerifySignature(
                publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
    }

    @Test func aWrongPassphraseADamagedFileAndNotAFileAreRefused() throws {
        let openssl = try OpenSSLCommand()
        try makeIdentity(openssl)
        try openssl.succeed([
            "pkcs12", "-export", "-in", "p12test.pem", "-inkey", "p12test.key", "-out", "a.p12", "-passout",
            "pass:right",
        ])
        let file = try openssl.file("a.p12")
        #expect(importing(file, [kSecImportExportPassphrase as String: "wrong"]).0 == errSecAuthFailed)
        #expect(importing(file, [:]).0 == errSecAuthFailed, "no passphrase is the empty one")
        #expect(importing(file, [kSecImportExportPassphrase as String: 42]).0 == errSecParam)
        var damaged = file
        damaged[damaged.count / 2] ^= 0x01
        let (damagedStatus, damagedItems) = importing(damaged, [kSecImportExportPassphrase as String: "right"])
        #expect(damagedStatus == errSecAuthFailed || damagedStatus == errSecDecode, "status \(damagedStatus)")
        #expect(damagedItems == nil)
        #expect(
            importing(Data("not a pkcs12 file".utf8), [kSecImportExportPassphrase as String: "right"]).0 == errSecDecode
        )
        #expect(importing(Data(), [:]).0 == errSecDecode)
        #expect(
            importing(file.prefix(file.count - 10), [kSecImportExportPassphrase as String: "right"]).0 == errSecDecode)
    }

    /// `openssl pkcs12 -legacy`: 3DES for the key, RC2-40 for the certificates, a SHA-1 MAC.
    @Test func legacyEncryptionReadsAsOpenSSLWroteIt() throws {
        let openssl = try OpenSSLCommand()
        try makeIdentity(openssl)
        try openssl.succeed([
            "pkcs12", "-export", "-legacy", "-in", "p12test.pem", "-inkey", "p12test.key", "-out", "legacy.p12",
            "-passout", "pass:pâss wörd",
        ])
        let info = try openssl.run([
            "pkcs12", "-info", "-noout", "-legacy", "-in", "legacy.p12", "-passin", "pass:pâss wörd",
        ]).output
        #expect(
            info.contains("pbeWithSHA1And3-KeyTripleDES-CBC") && info.contains("pbeWithSHA1And40BitRC2-CBC"), "\(info)")
        let file = try openssl.file("legacy.p12")
        let (status, items) = importing(file, [kSecImportExportPassphrase as String: "pâss wörd"])
        #expect(status == errSecSuccess)
        let identity = try #require(items?.first?[kSecImportItemIdentity as String] as? SecIdentity)
        var key: SecKey?
        var certificate: SecCertificate?
        SecIdentityCopyPrivateKey(identity, &key)
        SecIdentityCopyCertificate(identity, &certificate)
        let privateKey = try #require(key)
        let message = Data("legacy".utf8)
        let signature = try #require(
            SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        let publicKey = try #require(certificate.flatMap { SecCertificateCopyKey($0) })
        #expect(
            SecKeyVerifySignature(
                publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
        #expect(importing(file, [kSecImportExportPassphrase as String: "wrong"]).0 == errSecAuthFailed)
        // Without its MAC a wrong passphrase is caught by the decryption itself.
        try openssl.succeed([
            "pkcs12", "-export", "-legacy", "-nomac", "-in", "p12test.pem", "-inkey", "p12test.key", "-out",
            "nomac.p12", "-passout", "pass:pw",
        ])
        #expect(
            importing(try openssl.file("nomac.p12"), [kSecImportExportPassphrase as String: "pw"]).0 == errSecSuccess)
    }

    /// AES-128, a SHA-1 MAC, no MAC, an empty passphrase: each as openssl writes it.
    @Test(arguments: [
        (["-keypbe", "AES-128-CBC", "-certpbe", "AES-128-CBC", "-macalg", "sha1"], "pass:pw", "pw"),
        (["-keypbe", "AES-192-CBC", "-certpbe", "NONE", "-macalg", "sha512", "-iter", "10000"], "pass:pw", "pw"),
        (["-nomac"], "pass:pw", "pw"),
        ([], "pass:", ""),
    ])
    func otherOpenSSLChoicesImport(extra: [String], passout: String, passphrase: String) throws {
        let openssl = try OpenSSLCommand()
        try makeIdentity(openssl)
        try openssl.succeed(
            ["pkcs12", "-export", "-in", "p12test.pem", "-inkey", "p12test.key", "-out", "a.p12", "-passout", passout]
                + extra)
        let (status, items) = importing(try openssl.file("a.p12"), [kSecImportExportPassphrase as String: passphrase])
        #expect(status == errSecSuccess)
        #expect(items?.count == 1)
        #expect(
            items?.first?[kSecImportItemLabel as String] as? String == "p12test",
            "the subject summary, with no friendly name")
    }

    /// An RSA leaf signed by a CA, exported with the CA: the chain is the leaf, then the CA; the
    /// identity goes into the keychain with SecItemAdd and is found there.
    @Test func aChainIsInIssuingOrderAndTheIdentityCanBeStored() throws {
        let openssl = try OpenSSLCommand()
        try makeIdentity(openssl, name: "ca")
        try openssl.succeed([
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=leaf",
        ])
        try openssl.succeed([
            "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
            "leaf.pem", "-days", "2",
        ])
        try openssl.succeed([
            "pkcs12", "-export", "-in", "leaf.pem", "-inkey", "leaf.key", "-certfile", "ca.pem", "-out", "chain.p12",
            "-passout", "pass:pw",
        ])
        let (status, items) = importing(try openssl.file("chain.p12"), [kSecImportExportPassphrase as String: "pw"])
        #expect(status == errSecSuccess)
        let item = try #require(items?.first)
        #expect(items?.count == 1, "the CA's key is not in the file: it is no identity")
        let chain = try #require(item[kSecImportItemCertChain as String] as? [SecCertificate])
        #expect(chain.map { SecCertificateCopySubjectSummary($0) as String? } == ["leaf", "ca"])

        let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
        var key: SecKey?
        #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
        #expect(key.map { SecKeyGetBlockSize($0) } == 256)
        let keychain = try TestKeychain.make().install()
        defer { keychain.remove() }
        #expect(SecItemAdd([kSecValueRef as String: identity] as NSDictionary, nil) == errSecSuccess)
        var found: AnyObject?
        #expect(
            SecItemCopyMatching(
                [kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true] as NSDictionary, &found)
                == errSecSuccess)
        #expect(found as? SecIdentity == identity)
    }
}
