import Crypto
import Foundation
import KeychainProtocol
import X509
import _CryptoExtras

/// The public key of a certificate.
///
/// - Returns: nil when the certificate's key is not one this version holds (a NIST curve or
///   RSA).
///
/// Apple documentation: <https://developer.apple.com/documentation/security/2963103-seccertificatecopykey>
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    let key = certificate.certificate.publicKey
    if let p256 = P256.Signing.PublicKey(key) { return SecKey(.p256(p256)) }
    if let p384 = P384.Signing.PublicKey(key) { return SecKey(.p384(p384)) }
    if let p521 = P521.Signing.PublicKey(key) { return SecKey(.p521(p521)) }
    return _RSA.Signing.PublicKey(key).map { SecKey(.rsa($0)) }
}

/// Makes a key from its external representation (`SecKeyCopyExternalRepresentation`'s).
///
/// `attributes` must hold `kSecAttrKeyType` (`kSecAttrKeyTypeECSECPrimeRandom` or
/// `kSecAttrKeyTypeRSA`) and `kSecAttrKeyClass`. A public key is made here; a private key is
/// not supported yet (`errSecUnimplemented`).
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643701-seckeycreatewithdata>
public func SecKeyCreateWithData(_ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    func fail(_ failure: KeychainError) -> SecKey? {
        error?.pointee = Unmanaged.passRetained(osStatusError(failure))
        return nil
    }
    guard let type = attributes[kSecAttrKeyType as String] as? String else {
        return fail(KeychainError(.errSecParam, "kSecAttrKeyType is required: kSecAttrKeyTypeECSECPrimeRandom or kSecAttrKeyTypeRSA"))
    }
    guard let keyClass = attributes[kSecAttrKeyClass as String] as? String else {
        return fail(KeychainError(.errSecParam, "kSecAttrKeyClass is required"))
    }
    guard keyClass == kSecAttrKeyClassPublic as String else {
        return fail(KeychainError(.errSecUnimplemented, "only public keys are made from data in this version; private keys come with the Enclave's keys"))
    }
    guard let key = SecKey.publicKey(keyData as Data, type: type) else {
        return fail(KeychainError(.errSecDecode, "the data is not a public key of that type (X9.63 for an elliptic-curve key, PKCS #1 for RSA)"))
    }
    return key
}

/// The key's external representation: X9.63 for an elliptic-curve public key, PKCS #1 for an
/// RSA public key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643698-seckeycopyexternalrepresentation>
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    NSData(data: key.externalRepresentation)
}

/// The public key of `key`: itself, for a public key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643774-seckeycopypublickey>
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    key
}

/// The key's attributes: its class, type, sizes, application label (the SHA-1 of its external
/// representation, as Apple computes it) and what it can do.
///
/// `kSecAttrKeyClass` and `kSecAttrKeyType` are given as their constants' strings, which code
/// compares them with (UNCONFIRMED whether iOS gives numbers there).
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643699-seckeycopyattributes>
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    let attributes: [NSString: AnyObject] = [
        kSecAttrKeyClass: kSecAttrKeyClassPublic,
        kSecAttrKeyType: key.keyType,
        kSecAttrKeySizeInBits: NSNumber(value: key.sizeInBits),
        kSecAttrEffectiveKeySize: NSNumber(value: key.sizeInBits),
        kSecAttrApplicationLabel: NSData(data: Data(Insecure.SHA1.hash(data: key.externalRepresentation))),
        kSecAttrIsPermanent: NSNumber(value: false),
        kSecAttrCanVerify: NSNumber(value: true),
        kSecAttrCanSign: NSNumber(value: false),
        kSecAttrCanDecrypt: NSNumber(value: false),
        kSecAttrCanDerive: NSNumber(value: false),
    ]
    return NSDictionary(dictionary: attributes)
}

/// Whether `key` can do `operation` with `algorithm`: in this version, verify with the
/// signature algorithms `SecKeyAlgorithm` lists for its kind.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1644057-seckeyisalgorithmsupported>
public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm) -> Bool {
    operation == .verify && key.verifies(with: algorithm)
}

/// Checks a signature of `signedData`.
///
/// - Returns: true when it is valid; false with `error` set (`errSecVerifyFailed`) when it is
///   not, or (`errSecParam`) when the key does not verify with `algorithm`.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643715-seckeyverifysignature>
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    guard let valid = key.verifies(signature as Data, of: signedData as Data, algorithm) else {
        error?.pointee = Unmanaged.passRetained(osStatusError(KeychainError(.errSecParam, "\(algorithm.rawValue) is not an algorithm this key verifies with")))
        return false
    }
    if !valid {
        error?.pointee = Unmanaged.passRetained(osStatusError(KeychainError(.errSecVerifyFailed, "the signature does not match the data and the key")))
    }
    return valid
}
