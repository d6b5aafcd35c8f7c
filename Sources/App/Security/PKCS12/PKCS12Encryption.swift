import Crypto
import Foundation
import KeychainProtocol
import SwiftASN1
import _CryptoExtras

/// How a PKCS #12 file's keys and certificates are encrypted. PBES2 (RFC 8018), as OpenSSL 3
/// writes it: PBKDF2 with HMAC-SHA-1/256/384/512 and AES-128/192/256-CBC, all swift-crypto's.
///
/// PKCS #12's own legacy schemes (`pbeWithSHAAnd3-KeyTripleDES-CBC`, `pbeWithSHAAnd40BitRC2-CBC`:
/// files from OpenSSL 1.1 and `openssl pkcs12 -legacy`) go to ``PKCS12LegacyCipher``.
enum PKCS12Encryption {
    private static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 5, 13]
    private static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 5, 12]
    private static let legacyPKCS12: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 1]
    private static let pseudorandomFunctions: [ASN1ObjectIdentifier: KDF.Insecure.PBKDF2.HashFunction] = [
        [1, 2, 840, 113549, 2, 7]: .insecureSHA1, [1, 2, 840, 113549, 2, 9]: .sha256,
        [1, 2, 840, 113549, 2, 10]: .sha384, [1, 2, 840, 113549, 2, 11]: .sha512,
    ]
    private static let ciphers: [ASN1ObjectIdentifier: Int] = [
        [2, 16, 840, 1, 101, 3, 4, 1, 2]: 16, [2, 16, 840, 1, 101, 3, 4, 1, 22]: 24,
        [2, 16, 840, 1, 101, 3, 4, 1, 42]: 32,
    ]

    /// Decrypts `ciphertext`, encrypted with the algorithm `algorithm` names (an
    /// AlgorithmIdentifier node) under `passphrase` (taken as its UTF-8 bytes, as OpenSSL does).
    ///
    /// - Throws: errSecUnimplemented for another cipher; errSecDecode for malformed parameters;
    ///   `wrongPassphrase` when the padding does not check out.
    static func decrypt(
        _ ciphertext: ArraySlice<UInt8>, algorithm: ASN1Node, passphrase: String, wrongPassphrase: KeychainError
    ) throws -> Data {
        let (identifier, parameters) = try PKCS12Archive.algorithmIdentifier(algorithm)
        if identifier.oidComponents.starts(with: legacyPKCS12.oidComponents) {
            return try PKCS12LegacyCipher.decrypt(
                ciphertext, algorithm: algorithm.encodedBytes, passphrase: passphrase, wrongPassphrase: wrongPassphrase)
        }
        guard identifier == pbes2, let parameters else {
            throw KeychainError(
                .errSecUnimplemented,
                "the file is encrypted with an algorithm this keychain does not support (\(identifier)); PBES2 "
                    + "with AES-CBC and PKCS #12's 3DES and RC2 are"
            )
        }
        let (kdf, cipher) = try DER.sequence(parameters, identifier: .sequence) { nodes in
            guard let kdf = nodes.next(), let cipher = nodes.next() else {
                throw KeychainError(.errSecDecode, "PBES2 parameters are incomplete")
            }
            return (try PKCS12Archive.algorithmIdentifier(kdf), try PKCS12Archive.algorithmIdentifier(cipher))
        }
        guard kdf.0 == pbkdf2, let kdfParameters = kdf.1 else {
            throw KeychainError(
                .errSecUnimplemented, "PBES2 with a key derivation other than PBKDF2 (\(kdf.0)) is not supported")
        }
        guard let keySize = ciphers[cipher.0], let ivNode = cipher.1 else {
            throw KeychainError(
                .errSecUnimplemented, "PBES2 with a cipher other than AES-CBC (\(cipher.0)) is not supported")
        }
        let iv = try ASN1OctetString(derEncoded: ivNode).bytes
        guard iv.count == 16 else { throw KeychainError(.errSecDecode, "the AES-CBC IV is not 16 bytes") }
        let (salt, iterations, keyLength, prf) = try DER.sequence(kdfParameters, identifier: .sequence) { nodes in
            let salt = try ASN1OctetString(derEncoded: &nodes).bytes
            let iterations = try Int(derEncoded: &nodes)
            var keyLength: Int?
            var prf: ASN1ObjectIdentifier = [1, 2, 840, 113549, 2, 7]
            while let node = nodes.next() {
                if node.identifier == .integer {
                    keyLength = try Int(derEncoded: node)
                } else {
                    prf = try PKCS12Archive.algorithmIdentifier(node).0
                }
            }
            return (salt, iterations, keyLength, prf)
        }
        guard let hash = pseudorandomFunctions[prf] else {
            throw KeychainError(
                .errSecUnimplemented, "PBKDF2 with a pseudorandom function this keychain does not support (\(prf))")
        }
        guard (1...PKCS12KeyDerivation.maximumIterations).contains(iterations) else {
            throw KeychainError(
                .errSecDecode,
                "the file asks for \(iterations) PBKDF2 iterations; at most "
                    + "\(PKCS12KeyDerivation.maximumIterations) are accepted"
            )
        }
        guard keyLength == nil || keyLength == keySize else {
            throw KeychainError(.errSecDecode, "the PBKDF2 key length does not fit the cipher")
        }
        var password = Array(passphrase.utf8)
        defer { password.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: hash, outputByteCount: keySize, unsafeUncheckedRounds: iterations)
        do {
            return try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv))
        } catch {
            throw wrongPassphrase
        }
    }
}
