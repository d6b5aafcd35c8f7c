import Crypto
import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    /// Identities (`kSecClassIdentity`), as iOS keeps them: a certificate item and its private
    /// key's item, found together, added together as a `SecIdentity` and deleted together.
    @Suite struct IdentityItemTests {
        /// A certificate and the SecKey of its private key.
        private func pair(_ name: String) throws -> (SecCertificate, SecKey) {
            let key = P256.Signing.PrivateKey()
            let certificate = try #require(
                SecCertificateCreateWithData(nil, try TestCertificates.make(commonName: name, key: key) as CFData))
            let attributes =
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate]
                as NSDictionary
            return (certificate, try #require(SecKeyCreateWithData(key.x963Representation as CFData, attributes, nil)))
        }

        private func copy(_ query: [CFString: Any]) -> (OSStatus, AnyObject?) {
            var result: AnyObject?
            let status = SecItemCopyMatching(query as NSDictionary, &result)
            return (status, result)
        }

        @Test func aCertificateWithItsKeyIsAnIdentityThatSigns() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let (certificate, key) = try pair("client")
            #expect(
                SecItemAdd([kSecValueRef: certificate, kSecAttrLabel: "client certificate"] as NSDictionary, nil)
                    == errSecSuccess)
            #expect(copy([kSecClass: kSecClassIdentity]).0 == errSecItemNotFound, "no key yet")
            #expect(
                SecItemAdd([kSecValueRef: key, kSecAttrApplicationTag: Data("client".utf8)] as NSDictionary, nil)
                    == errSecSuccess)
            // A certificate without its key stays a certificate only.
            let (lonely, _) = try pair("lonely")
            #expect(SecItemAdd([kSecValueRef: lonely] as NSDictionary, nil) == errSecSuccess)

            let (status, found) = copy([
                kSecClass: kSecClassIdentity, kSecReturnRef: true, kSecMatchLimit: kSecMatchLimitAll,
            ])
            #expect(status == errSecSuccess)
            let identities = try #require(found as? [SecIdentity])
            #expect(identities.count == 1)
            let identity = try #require(identities.first)
            var certificateOut: SecCertificate?
            var keyOut: SecKey?
            #expect(SecIdentityCopyCertificate(identity, &certificateOut) == errSecSuccess)
            #expect(SecIdentityCopyPrivateKey(identity, &keyOut) == errSecSuccess)
            #expect(certificateOut == certificate)
            #expect(keyOut == key)
            let message = Data("TLS handshake".utf8)
            let signingKey = try #require(keyOut)
            let signature = try #require(
                SecKeyCreateSignature(signingKey, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
            let certificateKey = try #require(SecCertificateCopyKey(certificate))
            #expect(
                SecKeyVerifySignature(
                    certificateKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))

            // By a certificate attribute, by a key attribute, with its attributes.
            #expect(copy([kSecClass: kSecClassIdentity, kSecAttrLabel: "client certificate"]).0 == errSecSuccess)
            #expect(
                copy([kSecClass: kSecClassIdentity, kSecAttrApplicationTag: Data("client".utf8)]).0 == errSecSuccess)
            #expect(
                copy([kSecClass: kSecClassIdentity, kSecAttrApplicationTag: Data("other".utf8)]).0 == errSecItemNotFound
            )
            let attributes = try #require(
                copy([kSecClass: kSecClassIdentity, kSecReturnAttributes: true, kSecReturnRef: true]).1
                    as? [String: Any])
            #expect(attributes[kSecClass as String] as? String == kSecClassIdentity as String)
            #expect(attributes[kSecAttrLabel as String] as? String == "client certificate")
            #expect(attributes[kSecValueRef as String] as? SecIdentity == identity)
        }

        @Test func anIdentityIsAddedAndDeletedAsBothItems() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let (certificate, key) = try pair("both")
            #expect(SecItemAdd([kSecValueRef: certificate] as NSDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd([kSecValueRef: key] as NSDictionary, nil) == errSecSuccess)
            let identity = try #require(copy([kSecClass: kSecClassIdentity, kSecReturnRef: true]).1 as? SecIdentity)
            #expect(SecItemDelete([kSecClass: kSecClassIdentity] as NSDictionary) == errSecSuccess)
            #expect(copy([kSecClass: kSecClassCertificate]).0 == errSecItemNotFound)
            #expect(copy([kSecClass: kSecClassKey]).0 == errSecItemNotFound)
            #expect(SecItemDelete([kSecClass: kSecClassIdentity] as NSDictionary) == errSecItemNotFound)

            // Added back as one SecIdentity: both items return, and a second add is a duplicate.
            #expect(
                SecItemAdd([kSecValueRef: identity, kSecAttrLabel: "restored"] as NSDictionary, nil) == errSecSuccess)
            #expect(copy([kSecClass: kSecClassCertificate, kSecAttrLabel: "restored"]).0 == errSecSuccess)
            #expect(copy([kSecValueRef: key]).0 == errSecSuccess)
            #expect(SecItemAdd([kSecValueRef: identity] as NSDictionary, nil) == errSecDuplicateItem)
            #expect(copy([kSecValueRef: identity]).0 == errSecSuccess)
            #expect(
                SecItemUpdate(
                    [kSecClass: kSecClassIdentity] as NSDictionary, [kSecAttrLabel: "renamed"] as NSDictionary)
                    == errSecSuccess)
            #expect(copy([kSecClass: kSecClassIdentity, kSecAttrLabel: "renamed"]).0 == errSecSuccess)
        }
    }
}
