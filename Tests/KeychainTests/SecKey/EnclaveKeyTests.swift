import Crypto
import Foundation
import Keychain
import KeychainProtocol
import Testing

extension SecItemAPITests {
    /// Keys made inside the Enclave (`kSecAttrTokenIDSecureEnclave`): they sign, agree secrets
    /// and decrypt through the keychain, never leave it, belong to their access group, and
    /// each use satisfies their access control.
    @Suite struct EnclaveKeyTests {
        private func makeKey(_ extra: [CFString: Any] = [:], privateAttributes: [CFString: Any] = [:]) throws -> SecKey
        {
            var parameters: [CFString: Any] = [
                kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256,
                kSecAttrTokenID: kSecAttrTokenIDSecureEnclave,
            ]
            parameters.merge(extra) { $1 }
            if !privateAttributes.isEmpty { parameters[kSecPrivateKeyAttrs] = privateAttributes as NSDictionary }
            var error: Unmanaged<CFError>?
            guard let key = SecKeyCreateRandomKey(parameters as NSDictionary, &error) else {
                throw error.map { $0.takeRetainedValue() as Error } ?? KeychainError.errSecInternalComponent
            }
            return key
        }

        private func status(_ error: Unmanaged<CFError>?) -> Int? {
            error.map { CFErrorGetCode($0.takeRetainedValue()) }
        }

        @Test func anEnclaveKeySignsAgreesAndDecryptsButNeverExports() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let key = try makeKey()
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
            #expect(publicBytes.count == 65)
            let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
            #expect(attributes[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)

            // The private key is never given out.
            var error: Unmanaged<CFError>?
            #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
            #expect(status(error) == Int(errSecUnimplemented))

            // Signatures verify with swift-crypto, message and digest forms alike.
            let message = Data("sign in to the server".utf8)
            for algorithm in [
                SecKeyAlgorithm.ecdsaSignatureMessageX962SHA256, .ecdsaSignatureMessageX962SHA512,
                .ecdsaSignatureRFC4754,
            ] {
                let input = algorithm == .ecdsaSignatureRFC4754 ? Data(SHA256.hash(data: message)) : message
                let signature = try #require(SecKeyCreateSignature(key, algorithm, input as CFData, nil) as Data?)
                #expect(
                    SecKeyVerifySignature(publicKey, algorithm, input as CFData, signature as CFData, nil),
                    "\(algorithm.rawValue)")
            }
            let der = try #require(
                SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
            let verifier = try P256.Signing.PublicKey(x963Representation: publicBytes)
            #expect(verifier.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: der), for: message))

            // ECDH gives the secret the other party computes; ECIES to the public key opens.
            let other = P256.KeyAgreement.PrivateKey()
            let otherKey = try #require(
                SecKeyCreateWithData(
                    other.publicKey.x963Representation as CFData,
                    [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic]
                        as NSDictionary, nil))
            let shared = try #require(
                SecKeyCopyKeyExchangeResult(key, .ecdhKeyExchangeStandard, otherKey, [:] as NSDictionary, nil) as Data?)
            let expected = try other.sharedSecretFromKeyAgreement(
                with: P256.KeyAgreement.PublicKey(x963Representation: publicBytes)
            ).withUnsafeBytes { Data($0) }
            #expect(shared == expected)
            let sealed = try #require(
                SecKeyCreateEncryptedData(
                    publicKey, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                    Data("for the Enclave".utf8) as CFData, nil))
            #expect(
                SecKeyCreateDecryptedData(key, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, sealed, nil) as Data?
                    == Data("for the Enclave".utf8))
        }

        @Test func onlyP256KeysAreMadeInTheEnclave() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var error: Unmanaged<CFError>?
            for parameters: [CFString: Any] in [
                [
                    kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 384,
                    kSecAttrTokenID: kSecAttrTokenIDSecureEnclave,
                ],
                [
                    kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 2048,
                    kSecAttrTokenID: kSecAttrTokenIDSecureEnclave,
                ],
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrTokenID: "com.example.token"],
            ] {
                #expect(SecKeyCreateRandomKey(parameters as NSDictionary, &error) == nil)
                #expect(status(error) == Int(errSecParam))
            }
        }

        /// Kept by tag: its item holds only the sealed key, its reference signs, and the sealed
        /// key, changed in any byte, moved to another group or another keychain, is refused.
        @Test func aKeptKeyIsFoundByTagAndItsSealedFormOpensOnlyHere() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let tag = Data("com.example.enclave".utf8)
            let key = try makeKey(privateAttributes: [kSecAttrIsPermanent: true, kSecAttrApplicationTag: tag])
            var found: AnyObject?
            let query =
                [
                    kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecReturnRef: true, kSecReturnData: true,
                    kSecReturnAttributes: true,
                ] as NSDictionary
            #expect(SecItemCopyMatching(query, &found) == errSecSuccess)
            let item = try #require(found as? [String: Any])
            let stored = try #require(item[kSecValueRef as String] as? SecKey)
            #expect(stored == key)
            #expect(item[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            let message = Data("by reference".utf8)
            #expect(try signatureVerifies(signer: stored, publicKeyOf: key, message))

            // The item's data is the sealed key: the server refuses every altered copy of it.
            let sealedKey = try #require(item[kSecValueData as String] as? Data)
            let digest = Data(SHA256.hash(data: message))
            func use(
                _ sealed: Data, groups: [String] = ["com.example.app"], keychain: TestKeychain = keychain
            ) throws(KeychainError) -> KeychainReply {
                try keychain.perform(
                    .useEnclaveKey(EnclaveKeyUse(sealedKey: sealed, operation: .sign(digest: digest))), groups: groups)
            }
            guard case .keyOutput = try use(sealedKey) else { throw KeychainError.errSecInternalComponent }
            for index in stride(from: 0, to: sealedKey.count, by: 7) {
                var altered = sealedKey
                altered[index] ^= 0x01
                #expect(throws: KeychainError.self, "byte \(index)") { try use(altered) }
            }
            #expect(throws: KeychainError.errSecItemNotFound) { try use(sealedKey, groups: ["com.example.other"]) }
            let elsewhere = try TestKeychain.make()
            defer { elsewhere.remove() }
            #expect(throws: KeychainError.errSecDecode) { try use(sealedKey, keychain: elsewhere) }
        }

        /// `.privateKeyUsage` with `.userPresence`: no signature without the owner; one touch
        /// signs, and the context is reused.
        @Test func aKeyWithUserPresenceSignsOnlyAfterATouch() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            var error: Unmanaged<CFError>?
            let control = try #require(
                SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, .userPresence], &error))
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            let key = try makeKey(
                [kSecUseAuthenticationContext: context], privateAttributes: [kSecAttrAccessControl: control])
            let message = Data("challenge".utf8)
            #expect(prompt.sheets.withLock { $0.count } == 0, "making the key asks for nothing")

            // Straight to the server without a context: refused, carrying the access control.
            let sealed = try #require(keychain.sealedKey(of: key))
            let digest = Data(SHA256.hash(data: message))
            do {
                _ = try keychain.perform(
                    .useEnclaveKey(EnclaveKeyUse(sealedKey: sealed, operation: .sign(digest: digest))))
                Issue.record("an unauthenticated use signed")
            } catch {
                #expect(error.status == KeychainError.errSecInteractionNotAllowed.status)
                #expect(error.requiredAuthentication?.flags.contains(.userPresence) == true)
            }
            // Through the API: one touch, then the context's evaluation is reused.
            let signed =
                SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, &error) as Data?
            let signature = try #require(signed, "\(String(describing: error?.takeRetainedValue()))")
            #expect(
                SecKeyVerifySignature(
                    try #require(SecKeyCopyPublicKey(key)), .ecdsaSignatureMessageX962SHA256, message as CFData,
                    signature as CFData, nil))
            #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) != nil)
            #expect(prompt.sheets.withLock { $0.count } == 1)
            // A cancelled prompt signs nothing.
            let cancelling = LAContext.scripted(ScriptedPrompt([.press(.cancel)]))
            let other = try makeKey(
                [kSecUseAuthenticationContext: cancelling], privateAttributes: [kSecAttrAccessControl: control])
            #expect(SecKeyCreateSignature(other, .ecdsaSignatureMessageX962SHA256, message as CFData, &error) == nil)
            #expect(status(error) == Int(errSecUserCanceled))
        }
    }
}

extension TestKeychain {
    /// What a key's item would hold: its sealed form, read from the key's attributes path.
    func sealedKey(of key: SecKey) -> Data? {
        // Kept nowhere: add it, read its data, take it out again.
        let tag = Data(UUID().uuidString.utf8)
        guard SecItemAdd([kSecValueRef: key, kSecAttrApplicationTag: tag] as NSDictionary, nil) == errSecSuccess else {
            return nil
        }
        defer { SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as NSDictionary) }
        var data: AnyObject?
        guard
            SecItemCopyMatching(
                [kSecClass: kSecClassKey, kSecAttrApplicationTag: tag, kSecReturnData: true] as NSDictionary, &data)
                == errSecSuccess
        else { return nil }
        return data as? Data
    }
}
