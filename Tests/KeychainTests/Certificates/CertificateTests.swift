import Foundation
import Keychain
import Testing
import X509

/// `SecCertificate` and certificate items (`kSecClassCertificate`), as on iOS.
@Suite struct SecCertificateTests {
    @Test func aCertificateIsMadeFromDEROnlyAndGivesItBack() throws {
        let der = try TestCertificates.make(commonName: "www.example.com", email: "admin@example.com")
        let certificate = try #require(SecCertificateCreateWithData(nil, der as CFData))
        #expect(SecCertificateCopyData(certificate) as Data == der)
        #expect(SecCertificateCreateWithData(kCFAllocatorDefault, Data("not a certificate".utf8) as CFData) == nil)
        #expect(SecCertificateCreateWithData(nil, der.dropLast() as CFData) == nil)
        // An object, equal to another of the same DER.
        #expect(SecCertificateCreateWithData(nil, der as CFData) == certificate)
        let held: [String: AnyObject] = [kSecValueRef as String: certificate]
        #expect(held[kSecValueRef as String] is SecCertificate)
    }

    @Test func theSummaryIsTheCommonNameElseTheEmailElseTheOrganization() throws {
        let named = try #require(
            SecCertificateCreateWithData(nil, try TestCertificates.make(commonName: "Alice Example") as CFData))
        #expect(SecCertificateCopySubjectSummary(named) as String? == "Alice Example")
        var commonName: CFString?
        #expect(SecCertificateCopyCommonName(named, &commonName) == errSecSuccess)
        #expect(commonName as String? == "Alice Example")

        let mailOnly = try #require(
            SecCertificateCreateWithData(
                nil, try TestCertificates.make(commonName: nil, email: "bob@example.com") as CFData))
        #expect(SecCertificateCopySubjectSummary(mailOnly) as String? == "bob@example.com")
        #expect(SecCertificateCopyCommonName(mailOnly, &commonName) == errSecSuccess)
        #expect(commonName == nil)
        var addresses: CFArray?
        #expect(SecCertificateCopyEmailAddresses(mailOnly, &addresses) == errSecSuccess)
        #expect(addresses as? [String] == ["bob@example.com"])

        let organizationOnly = try #require(
            SecCertificateCreateWithData(
                nil, try TestCertificates.make(commonName: nil, organization: "Example Ltd") as CFData))
        #expect(SecCertificateCopySubjectSummary(organizationOnly) as String? == "Example Ltd")
    }

    /// A certificate made by `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1
    /// -subj "/CN=corpus.example.com/O=Example"`, and what OpenSSL says of it: the serial
    /// (`-serial`) and the SHA-1 of the public key's bits (`-pubkey | openssl ec -pubin
    /// -outform DER | tail -c 65 | sha1sum`), which is also its subject key identifier.
    static let openSSLCertificate = Data(
        base64Encoded: """
            MIIBszCCAVmgAwIBAgIUY7DJYm/oMUN2M1VV4GILJ/W9JIYwCgYIKoZIzj0EAwIw
            LzEbMBkGA1UEAwwSY29ycHVzLmV4YW1wbGUuY29tMRAwDgYDVQQKDAdFeGFtcGxl
            MB4XDTI2MTEyMzIxMzEyM1oXDTM2MTEyMDIxMzEyM1owLzEbMBkGA1UEAwwSY29y
            cHVzLmV4YW1wbGUuY29tMRAwDgYDVQQKDAdFeGFtcGxlMFkwEwYHKoZIzj0CAQYI
            KoZIzj0DAQcDQgAEtqYtGL7dcgooEQKvQk5wVpT4/kdf786JgEZZ3UuqorIWyt3R
            8fQ5wTBVMm1Am3aqY6dnhQWRaXYtnFwJpp4UGKNTMFEwHQYDVR0OBBYEFDsIXPmw
            lI2BNLule7jaE3eXhnqDMB8GA1UdIwQYMBaAFDsIXPmwlI2BNLule7jaE3eXhnqD
            MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgb5zASw3PEpDSi8FS
            Ukf/UdqcJlcJZ/lLjLzIGJrK2lcCIQDyDhrjq6GZslYGY+mXWdp2CLI4Kps7vcFx
            HKxhaYi0ag==
            """, options: .ignoreUnknownCharacters)!
    static let openSSLSerial = "63B0C9626FE8314376335555E0620B27F5BD2486"
    static let openSSLPublicKeyHash = "3B085CF9B0948D8134BBA57BB8DA137797867A83"

    @Test func theSerialNumberIsTheIntegersBytes() throws {
        let certificate = try #require(
            SecCertificateCreateWithData(
                nil, try TestCertificates.make(commonName: "s", serial: [0x0A, 0xBC]) as CFData))
        #expect(SecCertificateCopySerialNumberData(certificate, nil) as Data? == Data([0x0A, 0xBC]))
    }
}

extension SecItemAPITests {
    @Suite struct CertificateItemTests {
        private func add(_ certificate: SecCertificate, _ extra: [String: Any] = [:]) -> OSStatus {
            var attributes: [String: Any] = [
                kSecClass as String: kSecClassCertificate, kSecValueRef as String: certificate,
            ]
            attributes.merge(extra) { _, new in new }
            return SecItemAdd(attributes as CFDictionary, nil)
        }

        @Test func whatIsDerivedFromACertificateIsWhatOpenSSLSays() throws {
            let certificate = try #require(
                SecCertificateCreateWithData(nil, SecCertificateTests.openSSLCertificate as CFData))
            func hex(_ data: Data?) -> String? { data.map { $0.map { String(format: "%02X", $0) }.joined() } }
            #expect(
                hex(SecCertificateCopySerialNumberData(certificate, nil) as Data?) == SecCertificateTests.openSSLSerial)
            #expect(SecCertificateCopySubjectSummary(certificate) as String? == "corpus.example.com")
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var result: AnyObject?
            #expect(
                SecItemAdd([kSecValueRef: certificate, kSecReturnAttributes: true] as NSDictionary, &result)
                    == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(
                hex(attributes[kSecAttrPublicKeyHash as String] as? Data) == SecCertificateTests.openSSLPublicKeyHash)
            #expect(
                hex(attributes[kSecAttrSubjectKeyID as String] as? Data) == SecCertificateTests.openSSLPublicKeyHash)
            #expect(hex(attributes[kSecAttrSerialNumber as String] as? Data) == SecCertificateTests.openSSLSerial)
            // Self-signed: the issuer is the subject.
            #expect(attributes[kSecAttrIssuer as String] as? Data == attributes[kSecAttrSubject as String] as? Data)
        }

        @Test func aCertificateIsStoredWithTheAttributesItCarries() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let der = try TestCertificates.make(
                commonName: "www.example.com", serial: [0x05, 0x39], issuer: "Example CA")
            let certificate = try #require(SecCertificateCreateWithData(nil, der as CFData))
            #expect(add(certificate) == errSecSuccess)

            var result: CFTypeRef?
            let status = SecItemCopyMatching(
                [
                    kSecClass: kSecClassCertificate, kSecAttrLabel: "www.example.com", kSecReturnAttributes: true,
                    kSecReturnRef: true,
                ] as NSDictionary, &result)
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecValueRef as String] as? SecCertificate == certificate)
            #expect((attributes[kSecAttrCertificateType as String] as? NSNumber)?.intValue == 3)
            #expect((attributes[kSecAttrCertificateEncoding as String] as? NSNumber)?.intValue == 3)
            #expect(attributes[kSecAttrSerialNumber as String] as? Data == Data([0x05, 0x39]))
            #expect(attributes[kSecAttrPublicKeyHash as String] as? Data == (try TestCertificates.publicKeyHash(der)))
            let parsed = try Certificate(derEncoded: Array(der))
            #expect(
                attributes[kSecAttrSubjectKeyID as String] as? Data
                    == (try parsed.extensions.subjectKeyIdentifier).map { Data($0.keyIdentifier) })
            #expect((attributes[kSecAttrIssuer as String] as? Data)?.isEmpty == false)
            #expect(attributes[kSecAttrIssuer as String] as? Data != attributes[kSecAttrSubject as String] as? Data)
            #expect(attributes[kSecClass as String] as? String == kSecClassCertificate as String)
        }

        @Test func eachReturnKeyGivesWhatIOSGives() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let der = try TestCertificates.make(commonName: "ref")
            let certificate = try #require(SecCertificateCreateWithData(nil, der as CFData))
            var added: CFTypeRef?
            #expect(
                SecItemAdd([kSecValueRef: certificate, kSecReturnPersistentRef: true] as NSDictionary, &added)
                    == errSecSuccess, "the class comes from the reference")
            #expect(added is Data)

            var reference: AnyObject?
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassCertificate, kSecReturnRef: true] as NSDictionary, &reference)
                    == errSecSuccess)
            #expect(reference as? SecCertificate == certificate)
            var data: AnyObject?
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassCertificate, kSecReturnData: true] as NSDictionary, &data)
                    == errSecSuccess)
            #expect(data as? Data == der)
            var all: AnyObject?
            #expect(
                SecItemCopyMatching(
                    [kSecClass: kSecClassCertificate, kSecReturnRef: true, kSecMatchLimit: kSecMatchLimitAll]
                        as NSDictionary, &all) == errSecSuccess)
            #expect((all as? [SecCertificate]) == [certificate])
            // A reference finds its own item, and deletes it.
            var found: AnyObject?
            #expect(
                SecItemCopyMatching([kSecValueRef: certificate, kSecReturnAttributes: true] as NSDictionary, &found)
                    == errSecSuccess)
            #expect((found as? [String: Any])?[kSecAttrLabel as String] as? String == "ref")
            let other = try #require(
                SecCertificateCreateWithData(nil, try TestCertificates.make(commonName: "other", serial: [9]) as CFData)
            )
            #expect(SecItemCopyMatching([kSecValueRef: other] as NSDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemDelete([kSecClass: kSecClassCertificate, kSecValueRef: certificate] as NSDictionary)
                    == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass: kSecClassCertificate] as NSDictionary, nil) == errSecItemNotFound)
        }

        @Test func issuerAndSerialNumberMakeACertificateUnique() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let first = try TestCertificates.secCertificate(commonName: "a", serial: 1, issuer: "CA")
            // Another certificate (another key) from the same issuer with the same serial number.
            let sameKey = try TestCertificates.secCertificate(commonName: "b", serial: 1, issuer: "CA")
            let otherSerial = try TestCertificates.secCertificate(commonName: "a", serial: 2, issuer: "CA")
            let otherIssuer = try TestCertificates.secCertificate(commonName: "a", serial: 1, issuer: "Other CA")
            #expect(add(first) == errSecSuccess)
            #expect(add(first) == errSecDuplicateItem)
            #expect(add(sameKey) == errSecDuplicateItem)
            #expect(add(otherSerial) == errSecSuccess)
            #expect(add(otherIssuer) == errSecSuccess)
        }

        @Test func theLabelIsTheCallersAndTheCertificateCannotChange() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let der = try TestCertificates.make(commonName: "named")
            let certificate = try #require(SecCertificateCreateWithData(nil, der as CFData))
            #expect(add(certificate, [kSecAttrLabel as String: "My server"]) == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassCertificate, kSecAttrLabel: "My server"] as NSDictionary, nil)
                    == errSecSuccess)
            #expect(
                SecItemUpdate([kSecValueRef: certificate] as NSDictionary, [kSecAttrLabel: "Renamed"] as NSDictionary)
                    == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassCertificate, kSecAttrLabel: "Renamed"] as NSDictionary, nil)
                    == errSecSuccess)
            let other = try TestCertificates.make(commonName: "other")
            #expect(
                SecItemUpdate([kSecValueRef: certificate] as NSDictionary, [kSecValueData: other] as NSDictionary)
                    == errSecParam)
        }

        @Test func whatIsNotACertificateIsRefused() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                SecItemAdd([kSecClass: kSecClassCertificate, kSecValueData: Data("junk".utf8)] as NSDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd([kSecClass: kSecClassCertificate, kSecAttrLabel: "empty"] as NSDictionary, nil)
                    == errSecParam)
            let der = try TestCertificates.make(commonName: "both")
            let certificate = try #require(SecCertificateCreateWithData(nil, der as CFData))
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassCertificate, kSecValueRef: certificate, kSecValueData: der] as NSDictionary,
                    nil) == errSecParam)
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, kSecValueRef: certificate] as NSDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, kSecValueRef: NSData()] as NSDictionary, nil)
                    == errSecParam)
            // Its DER as kSecValueData is a certificate too.
            #expect(
                SecItemAdd([kSecClass: kSecClassCertificate, kSecValueData: der] as NSDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassCertificate, kSecAttrLabel: "both"] as NSDictionary, nil)
                    == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass: kSecClassIdentity] as NSDictionary, nil) == errSecItemNotFound,
                "a certificate without its key is no identity")
        }
    }
}
