import CPKCS12Legacy
import Foundation
import KeychainProtocol

/// PKCS #12's own password-based encryption (RFC 7292, appendix C): 3DES and RC2 keyed by its
/// key derivation, which OpenSSL 1.1, `openssl pkcs12 -legacy` and many older exports use and
/// iOS reads. swift-crypto has neither cipher, so OpenSSL's libcrypto decrypts these, with its
/// legacy provider in a library context of its own (``kc_pkcs12_legacy_decrypt``); every other
/// primitive of an import stays swift-crypto's.
enum PKCS12LegacyCipher {
    /// Decrypts `ciphertext` under the scheme `algorithm` (an AlgorithmIdentifier's DER) names.
    ///
    /// - Throws: `wrongPassphrase` when it does not decrypt; errSecDecode for a malformed
    ///   scheme; errSecUnimplemented when OpenSSL's legacy provider is not installed.
    static func decrypt(
        _ ciphertext: ArraySlice<UInt8>, algorithm: ArraySlice<UInt8>, passphrase: String,
        wrongPassphrase: KeychainError
    ) throws(KeychainError) -> Data {
        var plaintext: UnsafeMutablePointer<UInt8>?
        var length = 0
        // NUL-terminated, so never empty: an empty passphrase is still a pointer.
        var password = passphrase.utf8CString
        defer { password.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        let status = algorithm.withUnsafeBufferPointer { algorithm in
            ciphertext.withUnsafeBufferPointer { ciphertext in
                password.withUnsafeBufferPointer { password in
                    kc_pkcs12_legacy_decrypt(
                        algorithm.baseAddress, algorithm.count, password.baseAddress, password.count - 1,
                        ciphertext.baseAddress, ciphertext.count, &plaintext, &length)
                }
            }
        }
        switch status {
        case 0:
            guard let plaintext else { return Data() }
            defer { kc_pkcs12_legacy_free(plaintext, length) }
            return Data(bytes: plaintext, count: length)
        case -2: throw wrongPassphrase
        case -3:
            throw KeychainError(
                .errSecUnimplemented,
                "the file uses PKCS #12's legacy encryption (3DES or RC2), and OpenSSL 3's libcrypto with its legacy "
                    + "provider (libcrypto.so.3 and ossl-modules/legacy.so, in Debian's libssl3) is not installed"
            )
        default: throw KeychainError(.errSecDecode, "the file's legacy PKCS #12 encryption parameters are malformed")
        }
    }
}
