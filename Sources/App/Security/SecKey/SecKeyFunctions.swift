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
@discardableResult
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
/// `kSecAttrKeyTypeRSA`) and `kSecAttrKeyClass` (`kSecAttrKeyClassPublic` or `…Private`). The
/// key lives in this process; it is not added to the keychain.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643701-seckeycreatewithdata>
@discardableResult
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let type = attributes[kSecAttrKeyType as String] as? String else {
            throw KeychainError(
                .errSecParam, "kSecAttrKeyType is required: kSecAttrKeyTypeECSECPrimeRandom or kSecAttrKeyTypeRSA")
        }
        guard let keyClass = attributes[kSecAttrKeyClass as String] as? String else {
            throw KeychainError(
                .errSecParam, "kSecAttrKeyClass is required: kSecAttrKeyClassPublic or kSecAttrKeyClassPrivate")
        }
        guard let key = SecKey.make(keyData as Data, type: type, keyClass: keyClass) else {
            throw KeychainError(
                .errSecDecode,
                "the data is not a key of that type and class (X9.63 for an elliptic-curve key, PKCS #1 for RSA)")
        }
        return key
    }
}

/// The key's external representation: X9.63 (`04 ‖ X ‖ Y`, and `‖ K` for a private key) for
/// an elliptic-curve key, PKCS #1 DER for an RSA key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643698-seckeycopyexternalrepresentation>
@discardableResult
public func SecKeyCopyExternalRepresentation(
    _ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    reportingFailure(to: error) { () throws(KeychainError) in NSData(data: try key.externalRepresentation()) }
}

/// The public key of `key`: itself for a public key, the public half of a private key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643774-seckeycopypublickey>
@discardableResult
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    key.privateKey == nil ? key : SecKey(key.publicKey)
}

/// The key's size in bytes: an RSA key's modulus, an elliptic-curve key's field.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1399015-seckeygetblocksize>
@discardableResult
public func SecKeyGetBlockSize(_ key: SecKey) -> Int {
    key.blockSize
}

/// The key's attributes: its class, type, sizes, application label (the SHA-1 of its public
/// key's external representation, as Apple computes it) and what it can do.
///
/// `kSecAttrKeyClass` and `kSecAttrKeyType` are given as their constants' strings, which code
/// compares them with (UNCONFIRMED whether iOS gives numbers there). A Secure Enclave key's
/// attributes hold its `kSecAttrAccessControl`, as Apple's do.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643699-seckeycopyattributes>
@discardableResult
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    var attributes: [NSString: AnyObject] = [
        kSecAttrKeyClass: key.keyClass,
        kSecAttrKeyType: key.keyType,
        kSecAttrKeySizeInBits: NSNumber(value: key.sizeInBits),
        kSecAttrEffectiveKeySize: NSNumber(value: key.sizeInBits),
        kSecAttrApplicationLabel: NSData(data: key.applicationLabel),
        kSecAttrIsPermanent: NSNumber(value: false),
    ]
    for (name, flag) in key.capabilities { attributes[name as NSString] = NSNumber(value: flag) }
    if let enclaveKey = key.enclaveKey {
        attributes[kSecAttrTokenID] = kSecAttrTokenIDSecureEnclave
        if let control = (try? SealedEnclaveKey(decoding: enclaveKey.sealedKey))?.accessControl?.control {
            attributes[kSecAttrAccessControl] = SecAccessControl(control)
        }
    }
    return NSDictionary(dictionary: attributes)
}

/// Whether `key` can do `operation` with `algorithm`: sign (private key) and verify (public
/// key) with the signature algorithms, encrypt (public) and decrypt (private) with RSA PKCS #1,
/// OAEP SHA-1/SHA-256 and ECIES, and key exchange (private, elliptic-curve) with ECDH.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1644057-seckeyisalgorithmsupported>
@discardableResult
public func SecKeyIsAlgorithmSupported(
    _ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm
) -> Bool {
    let isPrivate = key.privateKey != nil
    switch operation {
    case .sign, .verify:
        guard let scheme = SignatureScheme(algorithm), scheme.fits(key.publicKey) else { return false }
        return isPrivate == (operation == .sign)
    case .encrypt, .decrypt:
        guard let scheme = EncryptionScheme(algorithm), scheme.fits(key.publicKey) else { return false }
        return isPrivate == (operation == .decrypt)
    case .keyExchange:
        guard KeyExchangeScheme(algorithm) != nil, isPrivate else { return false }
        if case .rsa = key.publicKey { return false }
        return true
    }
}

/// Signs `dataToSign` (the message, or the digest for a `…Digest…` algorithm) with a private
/// key.
///
/// - Returns: the signature (X9.62 DER for ECDSA, `r ‖ s` for RFC 4754, the modulus-sized
///   block for RSA), or nil with `error` set: `errSecParam` when the key cannot sign with
///   `algorithm` or a digest has the wrong length.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643916-seckeycreatesignature>
@discardableResult
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let scheme = SignatureScheme(algorithm) else { throw unsupported(algorithm) }
        return NSData(data: try key.sign(dataToSign as Data, scheme))
    }
}

/// Checks a signature of `signedData`.
///
/// - Returns: true when it is valid; false with `error` set (`errSecVerifyFailed`) when it is
///   not, or (`errSecParam`) when the key does not verify with `algorithm`.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643715-seckeyverifysignature>
@discardableResult
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let scheme = SignatureScheme(algorithm) else { throw unsupported(algorithm) }
        guard try key.verify(signature as Data, of: signedData as Data, scheme) else {
            throw KeychainError(.errSecVerifyFailed, "the signature does not match the data and the key")
        }
        return true
    } ?? false
}

/// Encrypts `plaintext` to a public key.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1643957-seckeycreateencrypteddata>
@discardableResult
public func SecKeyCreateEncryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let scheme = EncryptionScheme(algorithm) else { throw unsupported(algorithm) }
        return NSData(data: try key.encrypt(plaintext as Data, scheme))
    }
}

/// Decrypts `ciphertext` with a private key.
///
/// - Returns: the plaintext, or nil with `error` set (`errSecParam`, as Apple's adaptors
///   report it) when the key cannot decrypt with `algorithm` or the data does not decrypt.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1644043-seckeycreatedecrypteddata>
@discardableResult
public func SecKeyCreateDecryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let scheme = EncryptionScheme(algorithm) else { throw unsupported(algorithm) }
        return NSData(data: try key.decrypt(ciphertext as Data, scheme))
    }
}

/// ECDH of a private key with another party's public key.
///
/// `parameters` holds `kSecKeyKeyExchangeParameterRequestedSize` (required with a `…X963…`
/// algorithm) and `kSecKeyKeyExchangeParameterSharedInfo` (optional).
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1644033-seckeycopykeyexchangeresult>
@discardableResult
public func SecKeyCopyKeyExchangeResult(
    _ privateKey: SecKey, _ algorithm: SecKeyAlgorithm, _ publicKey: SecKey, _ parameters: CFDictionary,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    reportingFailure(to: error) { () throws(KeychainError) in
        guard let scheme = KeyExchangeScheme(algorithm) else { throw unsupported(algorithm) }
        let requested = parameters[kSecKeyKeyExchangeParameterRequestedSize as String]
        let sharedInfo = parameters[kSecKeyKeyExchangeParameterSharedInfo as String]
        if requested != nil && !(requested is NSNumber) || sharedInfo != nil && !(sharedInfo is Data) {
            throw KeychainError(
                .errSecParam,
                "kSecKeyKeyExchangeParameterRequestedSize takes a number and kSecKeyKeyExchangeParameterSharedInfo data"
            )
        }
        let size = (requested as? NSNumber)?.intValue
        return NSData(
            data: try privateKey.exchange(
                with: publicKey, scheme, requestedSize: size, sharedInfo: sharedInfo as? Data ?? Data()))
    }
}

/// The error of an algorithm name this version does not support, as Apple words it.
private func unsupported(_ algorithm: SecKeyAlgorithm) -> KeychainError {
    KeychainError(.errSecParam, "\(algorithm.rawValue): algorithm not supported by the key")
}

/// `body`'s value, or nil with `error` set to the `CFError` of what it threw.
func reportingFailure<Value>(
    to errorOut: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ body: () throws(KeychainError) -> Value
) -> Value? {
    do {
        return try body()
    } catch {
        errorOut?.pointee = Unmanaged.passRetained(osStatusError(error))
        return nil
    }
}

extension SecKey {
    /// `kSecAttrCan…` as Apple reports them: a private key signs, decrypts and derives; a
    /// public key verifies and encrypts; neither wraps.
    var capabilities: [(CFString, Bool)] {
        let isPrivate = privateKey != nil
        return [
            (kSecAttrCanSign, isPrivate), (kSecAttrCanDecrypt, isPrivate), (kSecAttrCanDerive, isPrivate),
            (kSecAttrCanVerify, !isPrivate), (kSecAttrCanEncrypt, !isPrivate),
            (kSecAttrCanWrap, false), (kSecAttrCanUnwrap, false),
        ]
    }
}
