import Crypto
import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    /// Keys as keychain items (`kSecClassKey`), as on iOS: kept by `SecKeyCreateRandomKey`
    /// with `kSecAttrIsPermanent` or added by `kSecValueRef`, found again as a `SecKey` by
    /// `kSecReturnRef`, with the attributes Apple maintains.
    @Suite struct SecKeyItemTests {
        private let tag = Data("com.example.signing".utf8)

        private func copy(_ query: [CFString: Any]) -> (OSStatus, AnyObject?) {
            var result: AnyObject?
            let status = SecItemCopyMatching(query as NSDictionary, &result)
            return (status, result)
        }

        @Test func aPermanentKeyIsFoundByItsTagAndSignsAsTheKeyGenerated() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let parameters: [CFString: Any] = [
                kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256,
                kSecPrivateKeyAttrs: [
                    kSecAttrIsPermanent: true, kSecAttrApplicationTag: tag, kSecAttrLabel: "signing key",
                ] as NSDictionary,
            ]
            var error: Unmanaged<CFError>?
            let generated = try #require(SecKeyCreateRandomKey(parameters as NSDictionary, &error))

            let (status, found) = copy([
                kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom,
                kSecReturnRef: true,
            ])
            #expect(status == errSecSuccess)
            let key = try #require(found as? SecKey)
            #expect(key == generated)
            #expect(try signatureVerifies(signer: key, publicKeyOf: generated, Data("from the keychain".utf8)))

            // Only the private key was kept; its attributes are Apple's.
            let (_, attributes) = copy([
                kSecClass: kSecClassKey, kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true,
                kSecReturnRef: true,
            ])
            let items = try #require(attributes as? [[String: Any]])
            #expect(items.count == 1)
            let item = try #require(items.first)
            #expect(item[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
            #expect(
                item[kSecAttrApplicationLabel as String] as? Data
                    == (SecKeyCopyAttributes(generated) as? [String: Any])?[kSecAttrApplicationLabel as String] as? Data
            )
            #expect(item[kSecAttrLabel as String] as? String == "signing key")
            #expect((item[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == 256)
            #expect(item[kSecAttrCanSign as String] as? Bool == true)
            #expect(item[kSecValueRef as String] as? SecKey == generated)
        }

        @Test func aKeyAddedByReferenceIsUniqueFoundAndDeletedByReference() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let privateKey = try #require(
                SecKeyCreateRandomKey(
                    [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 2048] as NSDictionary, nil))
            let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
            #expect(
                SecItemAdd([kSecValueRef: publicKey, kSecAttrApplicationTag: tag] as NSDictionary, nil)
                    == errSecSuccess, "the class comes from the reference")
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassKey, kSecValueRef: publicKey, kSecAttrApplicationTag: tag] as NSDictionary, nil
                ) == errSecDuplicateItem)
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassKey, kSecValueRef: privateKey, kSecAttrApplicationTag: tag] as NSDictionary,
                    nil) == errSecSuccess, "the other half is another item")
            #expect(
                SecItemAdd([kSecClass: kSecClassGenericPassword, kSecValueRef: privateKey] as NSDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd(
                    [kSecClass: kSecClassKey, kSecValueRef: privateKey, kSecValueData: Data([1])] as NSDictionary, nil)
                    == errSecParam)

            let (status, found) = copy([kSecValueRef: publicKey, kSecReturnRef: true])
            #expect(status == errSecSuccess)
            #expect(found as? SecKey == publicKey)
            #expect(SecKeyIsAlgorithmSupported(try #require(found as? SecKey), .encrypt, .rsaEncryptionOAEPSHA256))
            #expect(SecItemDelete([kSecValueRef: publicKey] as NSDictionary) == errSecSuccess)
            #expect(copy([kSecValueRef: publicKey]).0 == errSecItemNotFound)
            #expect(copy([kSecValueRef: privateKey]).0 == errSecSuccess)
        }

        /// A public key kept beside its private key; a failure of either add leaves neither.
        @Test func bothHalvesAreKeptWhenAskedAndAFailedPairLeavesNothing() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let parameters: [CFString: Any] = [
                kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrIsPermanent: true,
                kSecAttrApplicationTag: tag,
            ]
            #expect(SecKeyCreateRandomKey(parameters as NSDictionary, nil) != nil)
            let (_, all) = copy([kSecClass: kSecClassKey, kSecMatchLimit: kSecMatchLimitAll, kSecReturnRef: true])
            let keys = try #require(all as? [SecKey])
            #expect(
                Set(keys.map { (SecKeyCopyAttributes($0) as? [String: Any])?[kSecAttrKeyClass as String] as? String })
                    == [kSecAttrKeyClassPrivate as String, kSecAttrKeyClassPublic as String])

            // A public key whose add is refused (a bad accessibility) takes its private key out.
            var bad = parameters
            bad[kSecAttrApplicationTag] = Data("other".utf8)
            bad[kSecPublicKeyAttrs] = [kSecAttrAccessible: "not an accessibility"] as NSDictionary
            var error: Unmanaged<CFError>?
            #expect(SecKeyCreateRandomKey(bad as NSDictionary, &error) == nil)
            #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecParam))
            #expect(
                copy([kSecClass: kSecClassKey, kSecAttrApplicationTag: Data("other".utf8)]).0 == errSecItemNotFound)
        }

        /// A key item added as data (a symmetric key) keeps answering kSecReturnData; asked as a
        /// reference it is handed back as its data, having no SecKey form.
        @Test func aSymmetricKeyStoredAsDataComesBackAsData() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let secret = Data(repeating: 7, count: 32)
            #expect(
                SecItemAdd(
                    [
                        kSecClass: kSecClassKey, kSecAttrKeyClass: kSecAttrKeyClassSymmetric,
                        kSecAttrKeyType: kSecAttrKeyTypeAES, kSecAttrApplicationTag: tag, kSecValueData: secret,
                    ] as NSDictionary, nil) == errSecSuccess)
            #expect(
                copy([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecReturnData: true]).1 as? Data == secret)
            #expect(
                copy([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecReturnRef: true]).1 as? Data == secret)
        }
    }
}
