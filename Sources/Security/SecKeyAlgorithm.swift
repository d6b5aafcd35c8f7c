/// A key algorithm, named by Apple's string (`algid:sign:ECDSA:message-X962:SHA256`, …).
///
/// The signature algorithms this version verifies are listed; others are valid names that
/// `SecKeyIsAlgorithmSupported` answers false for.
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

    /// ECDSA over the message's SHA-1, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA1 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA1")
    /// ECDSA over the message's SHA-256, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA256")
    /// ECDSA over the message's SHA-384, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA384 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA384")
    /// ECDSA over the message's SHA-512, signature in X9.62 DER.
    public static let ecdsaSignatureMessageX962SHA512 = SecKeyAlgorithm("algid:sign:ECDSA:message-X962:SHA512")
    /// RSA PKCS #1 v1.5 over the message's SHA-1.
    public static let rsaSignatureMessagePKCS1v15SHA1 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA1")
    /// RSA PKCS #1 v1.5 over the message's SHA-256.
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA256")
    /// RSA PKCS #1 v1.5 over the message's SHA-384.
    public static let rsaSignatureMessagePKCS1v15SHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA384")
    /// RSA PKCS #1 v1.5 over the message's SHA-512.
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PKCS1v15:SHA512")
    /// RSA PSS over the message's SHA-256 (salt as long as the digest, as Apple's).
    public static let rsaSignatureMessagePSSSHA256 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA256")
    /// RSA PSS over the message's SHA-384.
    public static let rsaSignatureMessagePSSSHA384 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA384")
    /// RSA PSS over the message's SHA-512.
    public static let rsaSignatureMessagePSSSHA512 = SecKeyAlgorithm("algid:sign:RSA:message-PSS:SHA512")
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
