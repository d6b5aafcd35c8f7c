import Crypto
import Foundation

/// OpenSSH's fingerprint of a public key blob: `SHA256:` and the unpadded base64 of its SHA-256.
enum SSHFingerprint {
    static func of(blob: Data) -> String {
        "SHA256:" + Data(SHA256.hash(data: blob)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }
}
