/// A key algorithm, named by Apple's string (`algid:sign:ECDSA:message-X962:SHA256`, …).
///
/// Every name of Apple's `SecKeyAlgorithm` is here, with Apple's raw value, so code naming any
/// of them compiles; `SecKeyIsAlgorithmSupported` says which a key can use in this version.
/// SHA-224 (which swift-crypto does not offer), raw RSA, RSA over a caller's digest and the
/// RSA–AES-GCM hybrids are named but not supported.
public struct SecKeyAlgorithm: Hashable, RawRepresentable, @unchecked Sendable {
    /// Apple's name of the algorithm.
    public let rawValue: CFString

    /// The algorithm named `rawValue`.
    public init(rawValue: CFString) {
        self.rawValue = rawValue
    }

    /// The algorithm named `rawValue`.
    public init(_ rawValue: CFString) {
        self.rawValue = rawValue
    }

    /// Raw RSA (no padding); not supported here.
    public static let rsaSignatureRaw = SecKeyAlgorithm("algid:sign:RSA:raw")
    /// RSA PKCS #1 v1.5 over a digest with no DigestInfo; not supported here.
    public static let rsaSignatureDigestPKCS1v15Raw = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15")
    /// RSA PKCS #1 v1.5 over a SHA1-sized digest the caller computed; not supported here
    /// (swift-crypto signs its own digests only).
    public static let rsaSignatureDigestPKCS1v15SHA1 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA1")
    /// RSA PKCS #1 v1.5 over a SHA224-sized digest the caller computed; not supported here
    /// (swift-crypto signs its own digests only).
    public static let rsaSignatureDigestPKCS1v15SHA224 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA224")
    /// RSA PKCS #1 v1.5 over a SHA256-sized digest the caller computed; not supported here
    /// (swift-crypto signs its own digests only).
    public static let rsaSignatureDigestPKCS1v15SHA256 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA256")
    /// RSA PKCS #1 v1.5 over a SHA384-sized digest the caller computed; not supported here
    /// (swift-crypto signs its own digests only).
    public static let rsaSignatureDigestPKCS1v15SHA384 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA384")
    /// RSA PKCS #1 v1.5 over a SHA512-sized digest the caller computed; not supported here
    /// (swift-crypto signs its own digests only).
    public static let rsaSignatureDigestPKCS1v15SHA512 = SecKeyAlgorithm("algid:sign:RSA:digest-PKCS1v15:SHA512")
    /// RSA PSS over a SHA1-sized digest the caller computed; not supported here.
    public static let rsaSignatureDigestPSSSHA1 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA1:SHA1:20")
    /// RSA PSS over a SHA224-sized digest the caller computed; not supported here.
    public static let rsaSignatureDigestPSSSHA224 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA224:SHA224:24")
    /// RSA PSS over a SHA256-sized digest the caller computed; not supported here.
    public static let rsaSignatureDigestPSSSHA256 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA256:SHA256:32")
    /// RSA PSS over a SHA384-sized digest the caller computed; not supported here.
    public static let rsaSignatureDigestPSSSHA384 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA384:SHA384:48")
    /// RSA PSS over a SHA512-sized digest the caller computed; not supported here.
    public static let rsaSignatureDigestPSSSHA512 = SecKeyAlgorithm("algid:sign:RSA:digest-PSS:SHA512:SHA512:64")
    /// RSA PKCS #1 v1.5 over the message's SHA1.
    public static let rsaSignatureMessagePKCS1v15SHA1 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA1")
    /// RSA PKCS #1 v1.5 over the message's SHA224.
    public static let rsaSignatureMessagePKCS1v15SHA224 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA224")
    /// RSA PKCS #1 v1.5 over the message's SHA256.
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA256")
    /// RSA PKCS #1 v1.5 over the message's SHA384.
    public static let rsaSignatureMessagePKCS1v15SHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA384")
    /// RSA PKCS #1 v1.5 over the message's SHA512.
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA512")
    /// RSA PSS over the message's SHA1, MGF1 with the same hash and a salt as long as the digest.
    public static let rsaSignatureMessagePSSSHA1 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA1:SHA1:20")
    /// RSA PSS over the message's SHA224, MGF1 with the same hash and a salt as long as the digest.
    public static let rsaSignatureMessagePSSSHA224 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA224:SHA224:24")
    /// RSA PSS over the message's SHA256, MGF1 with the same hash and a salt as long as the digest.
    public static let rsaSignatureMessagePSSSHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA256:SHA256:32")
    /// RSA PSS over the message's SHA384, MGF1 with the same hash and a salt as long as the digest.
    public static let rsaSignatureMessagePSSSHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA384:SHA384:48")
    /// RSA PSS over the message's SHA512, MGF1 with the same hash and a salt as long as the digest.
    public static let rsaSignatureMessagePSSSHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA512:SHA512:64")
    /// ECDSA over a digest the caller computed, signature as `r ‖ s`, each as long as the key's
    /// block size (RFC 4754).
    public static let ecdsaSignatureRFC4754 = SecKeyAlgorithm("algid:sign:ECDSA:RFC4754")
    /// ECDSA over a digest of any length the caller computed, signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962")
    /// ECDSA over a SHA1 digest the caller computed (its length is checked), signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA1")
    /// ECDSA over a SHA224 digest the caller computed (its length is checked), signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA224")
    /// ECDSA over a SHA256 digest the caller computed (its length is checked), signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA256")
    /// ECDSA over a SHA384 digest the caller computed (its length is checked), signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA384")
    /// ECDSA over a SHA512 digest the caller computed (its length is checked), signature in X9.62 DER.
    public static let ecdsaSignatureDigestX962SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:digest-X962:SHA512")
    /// ECDSA over the message's SHA1, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA1")
    /// ECDSA over the message's SHA224, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA224 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA224")
    /// ECDSA over the message's SHA256, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA256")
    /// ECDSA over the message's SHA384, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA384")
    /// ECDSA over the message's SHA512, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA512")
    /// Raw RSA (no padding); not supported here.
    public static let rsaEncryptionRaw = SecKeyAlgorithm("algid:encrypt:RSA:raw")
    /// RSA PKCS #1 v1.5 encryption padding.
    public static let rsaEncryptionPKCS1 = SecKeyAlgorithm("algid:encrypt:RSA:PKCS1")
    /// RSA OAEP with SHA1 and MGF1 with SHA1.
    public static let rsaEncryptionOAEPSHA1 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA1")
    /// RSA OAEP with SHA224 and MGF1 with SHA224.
    public static let rsaEncryptionOAEPSHA224 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA224")
    /// RSA OAEP with SHA256 and MGF1 with SHA256.
    public static let rsaEncryptionOAEPSHA256 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA256")
    /// RSA OAEP with SHA384 and MGF1 with SHA384.
    public static let rsaEncryptionOAEPSHA384 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA384")
    /// RSA OAEP with SHA512 and MGF1 with SHA512.
    public static let rsaEncryptionOAEPSHA512 = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA512")
    /// An AES-GCM session key wrapped with RSA OAEP SHA1; not supported here.
    public static let rsaEncryptionOAEPSHA1AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA1:AESGCM")
    /// An AES-GCM session key wrapped with RSA OAEP SHA224; not supported here.
    public static let rsaEncryptionOAEPSHA224AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA224:AESGCM")
    /// An AES-GCM session key wrapped with RSA OAEP SHA256; not supported here.
    public static let rsaEncryptionOAEPSHA256AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA256:AESGCM")
    /// An AES-GCM session key wrapped with RSA OAEP SHA384; not supported here.
    public static let rsaEncryptionOAEPSHA384AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA384:AESGCM")
    /// An AES-GCM session key wrapped with RSA OAEP SHA512; not supported here.
    public static let rsaEncryptionOAEPSHA512AESGCM = SecKeyAlgorithm("algid:encrypt:RSA:OAEP:SHA512:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA1 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionStandardX963SHA1AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA224 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionStandardX963SHA224AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA256 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionStandardX963SHA256AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA384 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionStandardX963SHA384AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA512 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionStandardX963SHA512AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA1 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionCofactorX963SHA1AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA1:AESGCM")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA224 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionCofactorX963SHA224AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA256 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionCofactorX963SHA256AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA384 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionCofactorX963SHA384AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA512 over the ephemeral
    /// public key, AES-GCM with an all-zero 16-byte IV.
    public static let eciesEncryptionCofactorX963SHA512AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA224 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionStandardVariableIVX963SHA224AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM-KDFIV")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA256 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionStandardVariableIVX963SHA256AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA384 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionStandardVariableIVX963SHA384AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM-KDFIV")
    /// ECIES: standard ECDH with an ephemeral key, ANSI X9.63 KDF with SHA512 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionStandardVariableIVX963SHA512AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM-KDFIV")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA224 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionCofactorVariableIVX963SHA224AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM-KDFIV")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA256 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionCofactorVariableIVX963SHA256AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA384 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionCofactorVariableIVX963SHA384AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM-KDFIV")
    /// ECIES: cofactor ECDH with an ephemeral key, ANSI X9.63 KDF with SHA512 giving the AES-GCM
    /// key and its 16-byte IV.
    public static let eciesEncryptionCofactorVariableIVX963SHA512AESGCM = SecKeyAlgorithm(
        "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM-KDFIV")
    /// Standard ECDH: the shared secret's X coordinate as is.
    public static let ecdhKeyExchangeStandard = SecKeyAlgorithm("algid:keyexchange:ECDH")
    /// Standard ECDH, the shared secret run through the ANSI X9.63 KDF with SHA1
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeStandardX963SHA1 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA1")
    /// Standard ECDH, the shared secret run through the ANSI X9.63 KDF with SHA224
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeStandardX963SHA224 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA224")
    /// Standard ECDH, the shared secret run through the ANSI X9.63 KDF with SHA256
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeStandardX963SHA256 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA256")
    /// Standard ECDH, the shared secret run through the ANSI X9.63 KDF with SHA384
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeStandardX963SHA384 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA384")
    /// Standard ECDH, the shared secret run through the ANSI X9.63 KDF with SHA512
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeStandardX963SHA512 = SecKeyAlgorithm("algid:keyexchange:ECDH:KDFX963:SHA512")
    /// Cofactor ECDH: the shared secret's X coordinate as is.
    public static let ecdhKeyExchangeCofactor = SecKeyAlgorithm("algid:keyexchange:ECDHC")
    /// Cofactor ECDH, the shared secret run through the ANSI X9.63 KDF with SHA1
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeCofactorX963SHA1 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA1")
    /// Cofactor ECDH, the shared secret run through the ANSI X9.63 KDF with SHA224
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeCofactorX963SHA224 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA224")
    /// Cofactor ECDH, the shared secret run through the ANSI X9.63 KDF with SHA256
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeCofactorX963SHA256 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA256")
    /// Cofactor ECDH, the shared secret run through the ANSI X9.63 KDF with SHA384
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeCofactorX963SHA384 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA384")
    /// Cofactor ECDH, the shared secret run through the ANSI X9.63 KDF with SHA512
    /// (`kSecKeyKeyExchangeParameterRequestedSize`, `…SharedInfo`).
    public static let ecdhKeyExchangeCofactorX963SHA512 = SecKeyAlgorithm("algid:keyexchange:ECDHC:KDFX963:SHA512")
}

/// What a key is asked to do (`SecKeyIsAlgorithmSupported`), with Apple's raw values.
public enum SecKeyOperationType: Int, Sendable {
    /// Making a signature.
    case sign = 0
    /// Checking a signature.
    case verify = 1
    /// Encrypting.
    case encrypt = 2
    /// Decrypting.
    case decrypt = 3
    /// Key exchange.
    case keyExchange = 4
}

/// `SecKeyCopyKeyExchangeResult`'s parameter: how many bytes the KDF gives (required with a
/// `…X963…` algorithm).
nonisolated(unsafe) public let kSecKeyKeyExchangeParameterRequestedSize: CFString = "requestedSize"
/// `SecKeyCopyKeyExchangeResult`'s parameter: the X9.63 KDF's shared info (optional).
nonisolated(unsafe) public let kSecKeyKeyExchangeParameterSharedInfo: CFString = "sharedInfo"
