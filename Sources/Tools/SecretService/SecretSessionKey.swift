import CModularExponentiation
import Crypto
import CryptoExtras
import Foundation
import KeychainProtocol

/// The key of a Secret Service session opened with `dh-ietf1024-sha256-aes128-cbc-pkcs7`
/// (Secret Service API 0.2, "Transfer of Secrets"): secrets cross the bus encrypted under it,
/// each with a fresh 16-byte IV as its parameters.
///
/// The negotiation is finite-field Diffie-Hellman in RFC 2409's second Oakley group (the
/// 1024-bit MODP prime, generator 2). The shared secret, left-padded with zeros to 128 bytes,
/// goes through HKDF-SHA256 with no salt and empty info to 16 bytes: an AES-128 key for CBC
/// with PKCS#7 padding (swift-crypto's HKDF and CryptoExtras' AES-CBC).
///
/// The modular exponentiation is OpenSSL's constant-time Montgomery one
/// (`BN_mod_exp_mont_consttime`, CModularExponentiation): swift-crypto keeps BoringSSL's
/// exponentiation internal to its package. A general-purpose big-integer package took 1.5 s
/// for a session's two exponentiations in a debug build and was not constant-time.
public struct SecretSessionKey: Sendable {
    /// The algorithm's name in `OpenSession`.
    public static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// RFC 2409, 6.2: the second Oakley group's prime, 2^1024 - 2^960 - 1 + 2^64 * (⌊2^894 π⌋ + 129093),
    /// big-endian.
    static let prime = bytes(
        hex: "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")
    static let generator: [UInt8] = [2]
    /// The length of a public key and of the shared secret, in bytes.
    static let groupBytes = 128

    private let key: SymmetricKey

    /// The session's key from a key of one's own (exponent `privateExponent`, big-endian) and
    /// the peer's public key, as both sides compute it.
    init(privateExponent: [UInt8], peerPublicKey: [UInt8]) throws(SecretSessionError) {
        // A public key of 0, 1 or p - 1 (or not below p) would give a shared secret anyone
        // knows.
        let peer = Self.padded(Array(peerPublicKey.drop { $0 == 0 }))
        guard peer.count == Self.groupBytes, peer.lexicographicallyPrecedes(Self.primeMinusOne),
            Self.padded([1]).lexicographicallyPrecedes(peer)
        else {
            throw SecretSessionError("the client's public key is not in the group")
        }
        var shared = try Self.power(peer, privateExponent)
        defer { shared.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: shared), info: Data(), outputByteCount: 16)
    }

    /// Answers a client's `OpenSession`: a key pair of the service's own, the session's key,
    /// and the public key to send back (128 bytes).
    public static func negotiate(
        clientPublicKey: [UInt8]
    ) throws(SecretSessionError) -> (key: SecretSessionKey, servicePublicKey: [UInt8]) {
        let exponent = randomExponent()
        let key = try SecretSessionKey(privateExponent: exponent, peerPublicKey: clientPublicKey)
        return (key, try publicKey(of: exponent))
    }

    /// The public key of `exponent`: g^x mod p, 128 bytes big-endian.
    static func publicKey(of exponent: [UInt8]) throws(SecretSessionError) -> [UInt8] {
        try power(generator, exponent)
    }

    /// A private exponent: 32 random bytes (swift-crypto's generator), 2 or more.
    ///
    /// 256 bits, not the group's 1024: an exponent of twice a security strength gives that
    /// strength (NIST SP 800-56A's rule for safe-prime groups; RFC 3526, section 8), and 128 bits
    /// is above what the 1024-bit group itself gives (about 80). The prime is a safe prime, so a
    /// short exponent opens no small-subgroup shortcut. A full-size exponent made each of a
    /// session's two exponentiations four times dearer: a third of the bridge's CPU in a whole
    /// `secret-tool lookup`. The peer's exponent may be any size.
    static func randomExponent() -> [UInt8] {
        var random = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        random[random.count - 1] |= 2
        return random
    }

    /// `number` (big-endian) left-padded with zeros to 128 bytes; longer numbers are kept.
    static func padded(_ number: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 0, count: max(0, groupBytes - number.count)) + number
    }

    /// p - 1 (p ends in 0xFF, so only its last byte changes).
    private static let primeMinusOne = prime.dropLast() + [prime[prime.count - 1] - 1]

    /// `base` ^ `exponent` mod p, 128 bytes.
    private static func power(_ base: [UInt8], _ exponent: [UInt8]) throws(SecretSessionError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: groupBytes)
        guard kc_modular_exponentiation(base, base.count, exponent, exponent.count, prime, prime.count, &result) == 1
        else {
            throw SecretSessionError("OpenSSL's libcrypto (libcrypto.so.3) is needed for encrypted sessions")
        }
        return result
    }

    private static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// `secret` encrypted for the client: the IV (the secret's parameters) and the ciphertext.
    public func encrypt(_ secret: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        // 16 random bytes in one draw, as the keychain's other nonces are drawn (a byte at a time
        // was sixteen getrandom calls, a fifth of a GetSecrets of 700 items).
        let ivBytes = SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        // AES-CBC and its IV fail only for a key or IV of the wrong size, which these are not.
        let iv = try! AES._CBC.IV(ivBytes: ivBytes)
        let ciphertext = secret.withUnsafeBytes { plaintext in try! AES._CBC.encrypt(plaintext, using: key, iv: iv) }
        return (ivBytes, [UInt8](ciphertext))
    }

    /// The secret a client sent: `value` decrypted with the IV `parameters`.
    ///
    /// - Throws: ``SecretSessionError`` for an IV that is not 16 bytes, or a ciphertext that
    ///   does not decrypt to well-padded bytes under this session's key.
    public func decrypt(parameters: [UInt8], value: [UInt8]) throws(SecretSessionError) -> SecretBytes {
        guard parameters.count == 16, let iv = try? AES._CBC.IV(ivBytes: parameters) else {
            throw SecretSessionError("the secret's parameters are not a 16-byte IV")
        }
        guard !value.isEmpty, value.count % 16 == 0, var plaintext = try? AES._CBC.decrypt(value, using: key, iv: iv)
        else {
            throw SecretSessionError("the secret does not decrypt under this session's key")
        }
        defer { plaintext.resetBytes(in: plaintext.startIndex..<plaintext.endIndex) }
        return SecretBytes(plaintext)
    }
}

/// A session's negotiation or a secret's transfer failed: the message says which.
public struct SecretSessionError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
