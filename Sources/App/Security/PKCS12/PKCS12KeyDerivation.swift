import Crypto
import Foundation
import KeychainProtocol

/// The key derivation of PKCS #12 itself (RFC 7292, appendix B.2), which a PKCS #12 file's
/// integrity MAC is keyed with.
///
/// swift-crypto has no such function; this is the RFC's algorithm over swift-crypto's hashes,
/// checked against files `openssl pkcs12 -export` writes (the tests). The file's encryption is
/// PBES2 (``PKCS12Encryption``), whose PBKDF2 is swift-crypto's.
enum PKCS12KeyDerivation {
    /// What a derived key is for (the RFC's "ID" byte). Only the MAC's is used: encryption here
    /// is PBES2, and the legacy ciphers that take IDs 1 and 2 are not supported.
    enum Purpose: UInt8 {
        case macKey = 3
    }

    /// The most iterations a file may ask for: OpenSSL writes 2,048; a file asking for far more
    /// would hold the caller for minutes.
    static let maximumIterations = 1_000_000

    /// The passphrase as the derivation takes it: UTF-16 big-endian with a two-byte terminator.
    static func bmpPassword(_ passphrase: String) -> [UInt8] {
        passphrase.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } + [0, 0]
    }

    /// `byteCount` bytes derived from `password` (already in ``bmpPassword(_:)`` form) and
    /// `salt` with `iterations` rounds of `hash`.
    static func derive<Hash: HashFunction>(
        _ hash: Hash.Type, password: [UInt8], salt: [UInt8], iterations: Int, purpose: Purpose, byteCount: Int
    ) -> [UInt8] {
        let blockSize = Hash.blockByteCount
        let diversifier = [UInt8](repeating: purpose.rawValue, count: blockSize)
        func stretched(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let length = blockSize * ((bytes.count + blockSize - 1) / blockSize)
            return (0..<length).map { bytes[$0 % bytes.count] }
        }
        var input = stretched(salt) + stretched(password)
        var output: [UInt8] = []
        while output.count < byteCount {
            var block = Array(Hash.hash(data: diversifier + input))
            for _ in 1..<max(iterations, 1) { block = Array(Hash.hash(data: block)) }
            output += block
            // Each block of the input becomes (block + B + 1) mod 2^(8·blockSize), B being
            // the hash output repeated to the block size.
            let addend = (0..<blockSize).map { block[$0 % block.count] }
            for start in stride(from: 0, to: input.count, by: blockSize) {
                var carry = 1
                for index in (0..<blockSize).reversed() {
                    let sum = Int(input[start + index]) + Int(addend[index]) + carry
                    input[start + index] = UInt8(truncatingIfNeeded: sum)
                    carry = sum >> 8
                }
            }
        }
        return Array(output.prefix(byteCount))
    }

    /// Whether `mac` is the HMAC of `content` under the key derived from `passphrase`.
    ///
    /// An empty passphrase is tried both as the empty string's encoding and as no bytes at all,
    /// as OpenSSL does (files differ in which they used).
    static func isValidMAC<Hash: HashFunction>(
        _ hash: Hash.Type, _ mac: [UInt8], of content: [UInt8], salt: [UInt8], iterations: Int, passphrase: String
    ) -> Bool {
        var passwords = passphrase.isEmpty ? [bmpPassword(""), []] : [bmpPassword(passphrase)]
        defer {
            for index in passwords.indices {
                passwords[index].withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            }
        }
        return passwords.contains { password in
            var keyBytes = derive(
                hash, password: password, salt: salt, iterations: iterations, purpose: .macKey,
                byteCount: Hash.Digest.byteCount)
            defer { keyBytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            return HMAC<Hash>.isValidAuthenticationCode(
                mac, authenticating: content, using: SymmetricKey(data: keyBytes))
        }
    }
}
