import Crypto
import Foundation
import Keychain
import Testing
import _CryptoExtras

/// `SecKey`: public and private keys in Apple's byte formats, signing, encryption and key
/// exchange, checked against swift-crypto, OpenSSL and ciphertexts Apple's Security framework
/// made.
@Suite struct SecKeyTests {
    private func status(_ error: Unmanaged<CFError>?) -> Int? {
        error.map { CFErrorGetCode($0.takeRetainedValue()) }
    }

    private func generate(_ type: CFString, bits: Int) throws -> SecKey {
        var error: Unmanaged<CFError>?
        let key = SecKeyCreateRandomKey([kSecAttrKeyType: type, kSecAttrKeySizeInBits: bits] as NSDictionary, &error)
        #expect(error == nil)
        return try #require(key)
    }

    /// The external representation of the key's public key.
    private func publicBytes(_ key: SecKey) throws -> Data {
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        return try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
    }

    @Test func aCertificatesKeyIsItsPublicKeyInX963AndVerifiesItsSignatures() throws {
        let privateKey = P256.Signing.PrivateKey()
        let certificate = try #require(
            SecCertificateCreateWithData(nil, try TestCertificates.make(commonName: "k", key: privateKey) as CFData))
        let key = try #require(SecCertificateCopyKey(certificate))
        #expect(SecKeyCopyExternalRepresentation(key, nil) as Data? == privateKey.publicKey.x963Representation)
        let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPublic as String)
        #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeECSECPrimeRandom as String)
        #expect((attributes[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == 256)
        #expect(
            attributes[kSecAttrApplicationLabel as String] as? Data
                == Data(Insecure.SHA1.hash(data: privateKey.publicKey.x963Representation)))

        let message = Data("challenge".utf8)
        let signature = try privateKey.signature(for: message).derRepresentation
        #expect(
            SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
        let sha384 = try privateKey.signature(for: SHA384.hash(data: message)).derRepresentation
        #expect(SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA384, message as CFData, sha384 as CFData, nil))
        var error: Unmanaged<CFError>?
        #expect(
            !SecKeyVerifySignature(
                key, .ecdsaSignatureMessageX962SHA256, Data("other".utf8) as CFData, signature as CFData, &error))
        #expect(status(error) == Int(errSecVerifyFailed))
        #expect(
            !SecKeyVerifySignature(
                key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, signature as CFData, &error))
        #expect(status(error) == Int(errSecParam))
        #expect(SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA512))
        #expect(!SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA256))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, .rsaSignatureMessagePSSSHA256))
        #expect(SecKeyCopyPublicKey(key) == key)
    }

    @Test func theOpenSSLCertificatesKeyHashesAsOpenSSLSays() throws {
        let certificate = try #require(
            SecCertificateCreateWithData(nil, SecCertificateTests.openSSLCertificate as CFData))
        let key = try #require(SecCertificateCopyKey(certificate))
        let bits = try #require(SecKeyCopyExternalRepresentation(key, nil) as Data?)
        #expect(
            Data(Insecure.SHA1.hash(data: bits)).map { String(format: "%02X", $0) }.joined()
                == SecCertificateTests.openSSLPublicKeyHash)
    }

    @Test func keysAreMadeFromTheirExternalRepresentation() throws {
        let p384 = P384.Signing.PrivateKey()
        let publicAttributes =
            [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary
        let key = try #require(SecKeyCreateWithData(p384.publicKey.x963Representation as CFData, publicAttributes, nil))
        #expect((SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrKeySizeInBits as String] as? Int == 384)
        let message = Data("m".utf8)
        #expect(
            SecKeyVerifySignature(
                key, .ecdsaSignatureMessageX962SHA384, message as CFData,
                try p384.signature(for: message).derRepresentation as CFData, nil))

        // A private key is X9.63 followed by the scalar, as Apple exports it.
        let privateAttributes =
            [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate]
            as NSDictionary
        let privateKey = try #require(SecKeyCreateWithData(p384.x963Representation as CFData, privateAttributes, nil))
        #expect(SecKeyCopyExternalRepresentation(privateKey, nil) as Data? == p384.x963Representation)
        #expect(p384.x963Representation.count == 97 + 48)
        #expect(SecKeyCopyPublicKey(privateKey) == key)
        let signature = try #require(
            SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA384, message as CFData, nil) as Data?)
        #expect(
            p384.publicKey.isValidSignature(try P384.Signing.ECDSASignature(derRepresentation: signature), for: message)
        )

        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateWithData(Data(repeating: 4, count: 64) as CFData, publicAttributes, &error) == nil)
        #expect(status(error) == Int(errSecDecode))
        #expect(SecKeyCreateWithData(p384.publicKey.x963Representation as CFData, privateAttributes, &error) == nil)
        #expect(status(error) == Int(errSecDecode))
        #expect(
            SecKeyCreateWithData(
                p384.publicKey.x963Representation as CFData, [kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary,
                &error) == nil)
        #expect(status(error) == Int(errSecParam))
    }

    @Test func anRSAPublicKeyIsPKCS1AndVerifiesPKCS1AndPSS() throws {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let attributes =
            [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary
        let key = try #require(
            SecKeyCreateWithData(privateKey.publicKey.pkcs1DERRepresentation as CFData, attributes, nil))
        #expect(SecKeyCopyExternalRepresentation(key, nil) as Data? == privateKey.publicKey.pkcs1DERRepresentation)
        #expect(
            (SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeRSA
                as String)
        let message = Data("signed".utf8)
        let pkcs1 = try privateKey.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation
        let pss = try privateKey.signature(for: message, padding: .PSS).rawRepresentation
        #expect(SecKeyVerifySignature(key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, pkcs1 as CFData, nil))
        #expect(SecKeyVerifySignature(key, .rsaSignatureMessagePSSSHA256, message as CFData, pss as CFData, nil))
        #expect(!SecKeyVerifySignature(key, .rsaSignatureMessagePSSSHA256, message as CFData, pkcs1 as CFData, nil))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA256))
        #expect(SecKeyGetBlockSize(key) == 256)
    }

    /// Apple's names, as its headers give them (the PSS ones carry the MGF1 hash and salt).
    @Test func algorithmNamesAreApples() {
        #expect(
            SecKeyAlgorithm.rsaSignatureMessagePSSSHA256.rawValue as String
                == "algid:sign:RSA:message-PSS:SHA256:SHA256:32")
        #expect(
            SecKeyAlgorithm.ecdsaSignatureDigestX962SHA256.rawValue as String == "algid:sign:ECDSA:digest-X962:SHA256")
        #expect(
            SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM.rawValue as String
                == "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
        #expect(
            SecKeyAlgorithm.ecdhKeyExchangeStandardX963SHA256.rawValue as String
                == "algid:keyexchange:ECDH:KDFX963:SHA256")
        #expect(SecKeyAlgorithm.rsaEncryptionOAEPSHA256.rawValue as String == "algid:encrypt:RSA:OAEP:SHA256")
    }

    @Test func aGeneratedCurveKeySignsWhatSwiftCryptoVerifies() throws {
        let key = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: 256)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let x963 = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
        let verifier = try P256.Signing.PublicKey(x963Representation: x963)
        let message = Data("sign me".utf8)

        let der = try #require(
            SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        #expect(verifier.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: der), for: message))
        #expect(
            SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, der as CFData, nil))
        // The digest forms sign what the caller hashed; the message forms hash it themselves.
        let digest = Data(SHA256.hash(data: message))
        let overDigest = try #require(
            SecKeyCreateSignature(key, .ecdsaSignatureDigestX962SHA256, digest as CFData, nil) as Data?)
        #expect(
            SecKeyVerifySignature(
                publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, overDigest as CFData, nil))
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureDigestX962, digest as CFData, der as CFData, nil))
        let raw = try #require(SecKeyCreateSignature(key, .ecdsaSignatureRFC4754, digest as CFData, nil) as Data?)
        #expect(raw.count == 2 * SecKeyGetBlockSize(key))
        #expect(verifier.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: message))
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureRFC4754, digest as CFData, raw as CFData, nil))
        for algorithm: SecKeyAlgorithm in [
            .ecdsaSignatureMessageX962SHA1, .ecdsaSignatureMessageX962SHA384, .ecdsaSignatureMessageX962SHA512,
        ] {
            let signature = try #require(SecKeyCreateSignature(key, algorithm, message as CFData, nil) as Data?)
            #expect(SecKeyVerifySignature(publicKey, algorithm, message as CFData, signature as CFData, nil))
        }

        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCreateSignature(key, .ecdsaSignatureDigestX962SHA256, Data(repeating: 1, count: 20) as CFData, &error)
                == nil, "a digest of the wrong size")
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateSignature(publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, &error) == nil,
            "a public key does not sign")
        #expect(status(error) == Int(errSecParam))
        #expect(SecKeyCreateSignature(key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA224, message as CFData, &error) == nil,
            "SHA-224 is named, not offered")
        #expect(status(error) == Int(errSecParam))
        #expect(SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA256))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA256))
        #expect(SecKeyIsAlgorithmSupported(key, .keyExchange, .ecdhKeyExchangeStandard))
        #expect(SecKeyIsAlgorithmSupported(key, .decrypt, .eciesEncryptionStandardVariableIVX963SHA256AESGCM))
        #expect(SecKeyIsAlgorithmSupported(publicKey, .encrypt, .eciesEncryptionCofactorX963SHA256AESGCM))
        #expect(!SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA224))

        let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
        #expect(attributes[kSecAttrCanSign as String] as? Bool == true)
        #expect(attributes[kSecAttrCanVerify as String] as? Bool == false)
        #expect(
            attributes[kSecAttrApplicationLabel as String] as? Data == Data(Insecure.SHA1.hash(data: x963)),
            "both halves share the label")
        #expect(SecKeyGetBlockSize(key) == 32)
    }

    @Test func everyCurveAndRSAKeySizeIsGeneratedAndTheRestRefused() throws {
        for (bits, blockSize) in [(384, 48), (521, 66)] {
            let key = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: bits)
            #expect(SecKeyGetBlockSize(key) == blockSize)
            #expect((SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrKeySizeInBits as String] as? Int == bits)
        }
        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 255] as NSDictionary, &error)
                == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 8192] as NSDictionary, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(SecKeyCreateRandomKey([kSecAttrKeySizeInBits: 256] as NSDictionary, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeAES, kSecAttrKeySizeInBits: 256] as NSDictionary, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        // The size as a string, as older code gives it.
        #expect(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: "384"] as NSDictionary, nil)
                != nil)
        // SecKeyGeneratePair gives both halves.
        var publicKey: SecKey?
        var privateKey: SecKey?
        #expect(
            SecKeyGeneratePair(
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom] as NSDictionary, &publicKey, &privateKey)
                == errSecSuccess)
        #expect(try SecKeyCopyPublicKey(#require(privateKey)) == publicKey)
    }

    @Test func aGeneratedRSAKeySignsEncryptsAndDecryptsAsSwiftCryptoDoes() throws {
        let key = try generate(kSecAttrKeyTypeRSA, bits: 2048)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let pkcs1 = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
        let verifier = try _RSA.Signing.PublicKey(derRepresentation: pkcs1)
        let message = Data("rsa".utf8)
        for (algorithm, padding) in [
            (SecKeyAlgorithm.rsaSignatureMessagePKCS1v15SHA256, _RSA.Signing.Padding.insecurePKCS1v1_5),
            (.rsaSignatureMessagePSSSHA256, .PSS),
        ] {
            let signature = try #require(SecKeyCreateSignature(key, algorithm, message as CFData, nil) as Data?)
            #expect(signature.count == 256)
            #expect(verifier.isValidSignature(.init(rawRepresentation: signature), for: message, padding: padding))
            #expect(SecKeyVerifySignature(publicKey, algorithm, message as CFData, signature as CFData, nil))
        }
        // The private key exports as PKCS #1, which swift-crypto reads back.
        let privateDER = try #require(SecKeyCopyExternalRepresentation(key, nil) as Data?)
        #expect(try _RSA.Signing.PrivateKey(derRepresentation: privateDER).publicKey.pkcs1DERRepresentation == pkcs1)

        let secret = Data("a session key".utf8)
        for algorithm: SecKeyAlgorithm in [.rsaEncryptionOAEPSHA256, .rsaEncryptionOAEPSHA1, .rsaEncryptionPKCS1] {
            let ciphertext = try #require(
                SecKeyCreateEncryptedData(publicKey, algorithm, secret as CFData, nil) as Data?)
            #expect(SecKeyCreateDecryptedData(key, algorithm, ciphertext as CFData, nil) as Data? == secret)
        }
        let fromSwiftCrypto = try _RSA.Encryption.PublicKey(derRepresentation: pkcs1).encrypt(
            secret, padding: .PKCS1_OAEP_SHA256)
        #expect(
            SecKeyCreateDecryptedData(key, .rsaEncryptionOAEPSHA256, fromSwiftCrypto as CFData, nil) as Data? == secret)
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateDecryptedData(key, .rsaEncryptionOAEPSHA1, fromSwiftCrypto as CFData, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateEncryptedData(
                publicKey, .rsaEncryptionOAEPSHA256, Data(repeating: 1, count: 300) as CFData, &error) == nil,
            "longer than the modulus")
        #expect(status(error) == Int(errSecParam))
        #expect(
            !SecKeyIsAlgorithmSupported(publicKey, .encrypt, .rsaEncryptionOAEPSHA512),
            "SHA-512 OAEP is named, not offered")
    }

    /// Ciphertexts made by Apple's `SecKeyCreateEncryptedData`, each of its own name, with
    /// the SEC1 private keys (from the MIT-licensed jedda/ECIES test suite).
    static let appleECIESVectors: [(name: String, algorithm: SecKeyAlgorithm, key: String, ciphertext: String)] = [
        (
            "P256-SHA256-VIV", .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
            "MHcCAQEEIHGhxnpu3kG/nW5ozDZJ+TTFQvL6MynCcQWD6jHV4p0UoAoGCCqGSM49AwEHoUQDQgAEzgFYw3Rqc72IIYHV7JH6"
                + "M245n/nLnxyre1A7sc5nOt31ZyfJQLXGs4dY0cggne28ueXHID5lKz1JNChY49NHYg==",
            "BI6sBCGyf916GQSV3DHOvmFxOmzbV9pq08wcOdKaepP2/Qtepj9M71dYkzXf6OqIstDyyVIxfnAMfUpxZzoCHDbalYRzzwhq"
                + "Hwg7K6RNl1F29PVdLNtJH498yJSfloW/"
        ),
        (
            "P384-SHA384-VIV", .eciesEncryptionCofactorVariableIVX963SHA384AESGCM,
            "MIGkAgEBBDC5Lt6wBRiiEC2O71i3lv8Jtgg+YP4Y3gCj7B7nOtdQO/5PQPRjpFPJ3ft0yjbzHEagBwYFK4EEACKhZANiAATo"
                + "VnztZKN1KVhot+MoN3CiPDZ0PoCDXrdP1uHQ61nz4XVrNdxgxyNUJC6cd0gsbujme66wxrq28zqWYBKvrFtIlS4W+NkuyCi5"
                + "nABkHno7alAWv/fD7aQ8A3ZmWZohsaU=",
            "BM45TREbxELfwpTVBmltz+sB3vhkM85m/yiAsE8JSNmXVOeeUGzmxP5Z2jegApPxtOS8ilfhTN/m2XkOoJWGw3MKuekq5V5P"
                + "cdvAi5xKcoOEynkS7uAKS3nhBH/+g+9/iNoTcRSrEpbgm8dOCGe+VRQ7hK8vI0ZRw74kernlNDw="
        ),
        (
            "P384-SHA384-0IV", .eciesEncryptionCofactorX963SHA384AESGCM,
            "MIGkAgEBBDCveSReIMZa6hbWVgmESfu/jMpEqIldBHcx4nQ46zxJ+hvm4lnesKrn0P0BkFYZ0jSgBwYFK4EEACKhZANiAAT0"
                + "ctzSPeNUinYOJdYtCafXAsTKHLGY4WPPRM8pYL5x1UrvnPN0G1yiF4QsTX2Pgyvh2qositdwRGxv3ruo1yR8TcztRXugZF4a"
                + "5xmcZuQW8hcEmPuk+xS5XXUMzryiEQc=",
            "BERkPl0YZUa9r7JV4W6n/rxsGBpzwdCpIgRaOKxRYuLHx3v5hGnTM1oGOEZzJQnpfvtperUyFfnPB5GP5ioxK4YkrqfjIlF0"
                + "ip18v30o7TWReJ+MrKYWcC7/TGe/SxPagi/zX9uz4N0Jzp3GFarI5LUQ9mJNIna/3ajuBC9Du94="
        ),
        (
            "P521-SHA512-0IV", .eciesEncryptionCofactorX963SHA512AESGCM,
            "MIHcAgEBBEIAqKpwdZ9JdC3JdVpM7gj1Bgkep3LNTkYWqEYqwNe5w7oyzDh1yU0LVZzefyZNdaagU6DGNdZ+5u9cHqnh9GrQ"
                + "5gWgBwYFK4EEACOhgYkDgYYABAD+MDxfbvbe9ZRZcZgWyDBbpf3JxHii0iScjxNqNWClJWlehHfX8niGE6VNktRQ3lMIwDSv"
                + "Uy3Esiex3gu8RHZnwAGzPjwLm1/w2YbOfp2TCNTL8m6eYUfLU0SNW7B61koL+Sk50yTHoseP7+lmM2t8x6uKsyLdo+XCIevp"
                + "W8IEh0s5wg==",
            "BABqJoMa89aD0rRkZ+WrmWTeqUfcr3uvLmyk7KlbWPm45m0ptDeqsaxFtqeM0VR6IoBMQcvcCcW+hzlLPr7i15LJlADzKYe7"
                + "al7Vp10fJBnnhM2K7Z12o/VtOynEEt+ed5IkP9BiopN/3swl79caHQqXxX+SWQijwosMh0rGFJZPjsPFcPpe8Aj9CiJ3y0hR"
                + "H1D4fp+qtpx9LOBLyuXvRwdFi0Y="
        ),
    ]

    /// The SEC1 DER private key of a vector as this package's private key (X9.63 with the
    /// scalar, made through swift-crypto).
    private func secKey(sec1 base64: String) throws -> SecKey {
        let der = try #require(Data(base64Encoded: base64))
        let x963: Data
        switch der.count {
        case ..<130: x963 = try P256.Signing.PrivateKey(derRepresentation: der).x963Representation
        case ..<190: x963 = try P384.Signing.PrivateKey(derRepresentation: der).x963Representation
        default: x963 = try P521.Signing.PrivateKey(derRepresentation: der).x963Representation
        }
        let attributes =
            [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate]
            as NSDictionary
        return try #require(SecKeyCreateWithData(x963 as CFData, attributes, nil))
    }

    @Test(arguments: appleECIESVectors.map(\.name))
    func whatApplesECIESEncryptedDecryptsHere(name: String) throws {
        let vector = try #require(Self.appleECIESVectors.first { $0.name == name })
        let key = try secKey(sec1: vector.key)
        let ciphertext = try #require(Data(base64Encoded: vector.ciphertext))
        var error: Unmanaged<CFError>?
        let plaintext = SecKeyCreateDecryptedData(key, vector.algorithm, ciphertext as CFData, &error) as Data?
        #expect(plaintext == Data(name.utf8), "\(status(error).map(String.init) ?? "")")
        // One bit flipped in the tag: refused, as Apple refuses it.
        var damaged = ciphertext
        damaged[damaged.count - 1] ^= 1
        #expect(SecKeyCreateDecryptedData(key, vector.algorithm, damaged as CFData, &error) == nil)
        #expect(status(error) == Int(errSecParam))
    }

    @Test func eciesRoundTripsOnEveryCurveAndVariant() throws {
        let algorithms: [SecKeyAlgorithm] = [
            .eciesEncryptionStandardX963SHA256AESGCM, .eciesEncryptionCofactorX963SHA1AESGCM,
            .eciesEncryptionStandardVariableIVX963SHA256AESGCM,
            .eciesEncryptionCofactorVariableIVX963SHA512AESGCM,
        ]
        for bits in [256, 384, 521] {
            let key = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: bits)
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            for algorithm in algorithms {
                let plaintext = Data("ecies \(bits) \(algorithm.rawValue)".utf8)
                let packet = try #require(
                    SecKeyCreateEncryptedData(publicKey, algorithm, plaintext as CFData, nil) as Data?)
                #expect(
                    packet.count == 2 * SecKeyGetBlockSize(key) + 1 + plaintext.count + 16,
                    "ephemeral key ‖ ciphertext ‖ tag")
                #expect(SecKeyCreateDecryptedData(key, algorithm, packet as CFData, nil) as Data? == plaintext)
            }
        }
        var error: Unmanaged<CFError>?
        let key = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: 256)
        #expect(
            SecKeyCreateDecryptedData(
                key, .eciesEncryptionStandardX963SHA256AESGCM, Data(repeating: 4, count: 20) as CFData, &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCreateEncryptedData(key, .eciesEncryptionStandardX963SHA256AESGCM, Data() as CFData, &error) == nil,
            "a private key does not encrypt")
        #expect(status(error) == Int(errSecParam))
    }

    @Test func ecdhAgreesWithSwiftCryptoRawAndThroughTheX963KDF() throws {
        let mine = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: 256)
        let theirs = P256.KeyAgreement.PrivateKey()
        let publicAttributes =
            [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary
        let theirPublicKey = try #require(
            SecKeyCreateWithData(theirs.publicKey.x963Representation as CFData, publicAttributes, nil))
        let myPublic = try P256.KeyAgreement.PublicKey(x963Representation: publicBytes(mine))
        let expected = try theirs.sharedSecretFromKeyAgreement(with: myPublic)

        let raw =
            SecKeyCopyKeyExchangeResult(mine, .ecdhKeyExchangeStandard, theirPublicKey, [:] as NSDictionary, nil)
            as Data?
        #expect(raw == expected.withUnsafeBytes { Data($0) })
        #expect(
            SecKeyCopyKeyExchangeResult(mine, .ecdhKeyExchangeCofactor, theirPublicKey, [:] as NSDictionary, nil)
                as Data? == raw)
        let info = Data("context".utf8)
        let derived =
            SecKeyCopyKeyExchangeResult(
                mine, .ecdhKeyExchangeStandardX963SHA256, theirPublicKey,
                [kSecKeyKeyExchangeParameterRequestedSize: 42, kSecKeyKeyExchangeParameterSharedInfo: info]
                    as NSDictionary, nil) as Data?
        #expect(
            derived
                == expected.x963DerivedSymmetricKey(using: SHA256.self, sharedInfo: info, outputByteCount: 42)
                .withUnsafeBytes { Data($0) })

        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCopyKeyExchangeResult(
                mine, .ecdhKeyExchangeStandardX963SHA256, theirPublicKey, [:] as NSDictionary, &error) == nil,
            "the KDF needs a size")
        #expect(status(error) == Int(errSecParam))
        let otherCurve = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: 384)
        #expect(
            SecKeyCopyKeyExchangeResult(
                mine, .ecdhKeyExchangeStandard, try #require(SecKeyCopyPublicKey(otherCurve)), [:] as NSDictionary,
                &error) == nil)
        #expect(status(error) == Int(errSecParam))
        #expect(
            SecKeyCopyKeyExchangeResult(
                theirPublicKey, .ecdhKeyExchangeStandard, theirPublicKey, [:] as NSDictionary, &error) == nil,
            "a public key does not agree")
        #expect(status(error) == Int(errSecParam))
    }

    /// The exported public key, as a PEM OpenSSL reads, verifies the signature with the real
    /// `openssl` command.
    @Test func openSSLVerifiesWhatAGeneratedKeySigns() throws {
        let key = try generate(kSecAttrKeyTypeECSECPrimeRandom, bits: 256)
        let x963 = try publicBytes(key)
        let message = Data("verified by openssl".utf8)
        let signature = try #require(
            SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        let openssl = try OpenSSLCommand()
        try openssl.write(Data(P256.Signing.PublicKey(x963Representation: x963).pemRepresentation.utf8), to: "key.pem")
        try openssl.write(message, to: "message")
        try openssl.write(signature, to: "signature")
        func verify(_ file: String) throws -> (Int32, String) {
            try openssl.run(["dgst", "-sha256", "-verify", "key.pem", "-signature", "signature", file])
        }
        let (status, output) = try verify("message")
        #expect(status == 0 && output.contains("Verified OK"), "\(output)")
        try openssl.write(Data("tampered".utf8), to: "other")
        #expect(try verify("other").0 != 0)
    }
}
