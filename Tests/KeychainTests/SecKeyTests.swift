import Crypto
import Foundation
import Keychain
import Testing
import _CryptoExtras

/// `SecKey` public keys: from a certificate or their external representation, in Apple's byte
/// formats, verifying what swift-crypto signs.
@Suite struct SecKeyTests {
    private func status(_ error: Unmanaged<CFError>?) -> Int? {
        error.map { CFErrorGetCode($0.takeRetainedValue()) }
    }

    @Test func aCertificatesKeyIsItsPublicKeyInX963AndVerifiesItsSignatures() throws {
        let privateKey = P256.Signing.PrivateKey()
        let certificate = try #require(SecCertificateCreateWithData(nil, try TestCertificates.make(commonName: "k", key: privateKey) as CFData))
        let key = try #require(SecCertificateCopyKey(certificate))
        #expect(SecKeyCopyExternalRepresentation(key, nil) as Data? == privateKey.publicKey.x963Representation)
        let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPublic as String)
        #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeECSECPrimeRandom as String)
        #expect((attributes[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == 256)
        #expect(attributes[kSecAttrApplicationLabel as String] as? Data == Data(Insecure.SHA1.hash(data: privateKey.publicKey.x963Representation)))

        let message = Data("challenge".utf8)
        let signature = try privateKey.signature(for: message).derRepresentation
        #expect(SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
        let sha384 = try privateKey.signature(for: SHA384.hash(data: message)).derRepresentation
        #expect(SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA384, message as CFData, sha384 as CFData, nil))
        var error: Unmanaged<CFError>?
        #expect(!SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA256, Data("other".utf8) as CFData, signature as CFData, &error))
        #expect(status(error) == Int(errSecVerifyFailed))
        #expect(!SecKeyVerifySignature(key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, signature as CFData, &error))
        #expect(status(error) == Int(errSecParam))
        #expect(SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA512))
        #expect(!SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA256))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, .rsaSignatureMessagePSSSHA256))
        #expect(SecKeyCopyPublicKey(key) == key)
    }

    @Test func theOpenSSLCertificatesKeyHashesAsOpenSSLSays() throws {
        let certificate = try #require(SecCertificateCreateWithData(nil, SecCertificateTests.openSSLCertificate as CFData))
        let key = try #require(SecCertificateCopyKey(certificate))
        let bits = try #require(SecKeyCopyExternalRepresentation(key, nil) as Data?)
        #expect(Data(Insecure.SHA1.hash(data: bits)).map { String(format: "%02X", $0) }.joined() == SecCertificateTests.openSSLPublicKeyHash)
    }

    @Test func aPublicKeyIsMadeFromItsExternalRepresentation() throws {
        let p384 = P384.Signing.PrivateKey()
        let attributes = [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary
        let key = try #require(SecKeyCreateWithData(p384.publicKey.x963Representation as CFData, attributes, nil))
        #expect((SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrKeySizeInBits as String] as? Int == 384)
        let message = Data("m".utf8)
        #expect(SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA384, message as CFData, try p384.signature(for: message).derRepresentation as CFData, nil))

        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateWithData(Data(repeating: 4, count: 64) as CFData, attributes, &error) == nil)
        #expect(status(error) == Int(errSecDecode))
        let privateAttributes = [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as NSDictionary
        #expect(SecKeyCreateWithData(p384.x963Representation as CFData, privateAttributes, &error) == nil)
        #expect(status(error) == Int(errSecUnimplemented))
        #expect(SecKeyCreateWithData(p384.publicKey.x963Representation as CFData, [kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary, &error) == nil)
        #expect(status(error) == Int(errSecParam))
    }

    @Test func anRSAPublicKeyIsPKCS1AndVerifiesPKCS1AndPSS() throws {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let attributes = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic] as NSDictionary
        let key = try #require(SecKeyCreateWithData(privateKey.publicKey.pkcs1DERRepresentation as CFData, attributes, nil))
        #expect(SecKeyCopyExternalRepresentation(key, nil) as Data? == privateKey.publicKey.pkcs1DERRepresentation)
        #expect((SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeRSA as String)
        let message = Data("signed".utf8)
        let pkcs1 = try privateKey.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation
        let pss = try privateKey.signature(for: message, padding: .PSS).rawRepresentation
        #expect(SecKeyVerifySignature(key, .rsaSignatureMessagePKCS1v15SHA256, message as CFData, pkcs1 as CFData, nil))
        #expect(SecKeyVerifySignature(key, .rsaSignatureMessagePSSSHA256, message as CFData, pss as CFData, nil))
        #expect(!SecKeyVerifySignature(key, .rsaSignatureMessagePSSSHA256, message as CFData, pkcs1 as CFData, nil))
        #expect(!SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA256))
    }
}
