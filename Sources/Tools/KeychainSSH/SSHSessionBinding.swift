import Crypto
import CryptoExtras
import Foundation

/// What `session-bind@openssh.com` says, once its signature is checked: the SSH session the
/// client has with a server, whose host key signed the session's identifier.
///
/// OpenSSH's ssh sends it before it asks for a signature, so that the agent knows which host the
/// user is logging in to. Anyone can send the message, though, with any host's public key: the
/// binding counts only when the host key's signature over the session identifier verifies
/// (a program that claims GitHub's key cannot sign for it), and the agent then signs, with a key
/// that asks the owner, only user authentications for that very session (``SSHSignedData``).
struct SSHSessionBinding: Sendable, Equatable {
    /// The server's host key, as its blob.
    let hostKey: Data
    /// The session identifier (the key exchange's hash).
    let sessionIdentifier: Data
    /// Whether the client forwards the agent over this session: the connection's requests then
    /// come from a program on that host (``SSHAgentConnection``).
    let isForwarding: Bool

    /// The host key's fingerprint, for the sheet.
    var hostFingerprint: String { SSHFingerprint.of(blob: hostKey) }

    /// Reads the extension's body (after its name) and checks the signature; nil when it does not
    /// verify or names a key type this agent does not know.
    init?(_ reader: inout SSHReader) throws(SSHDecodingError) {
        let hostKey = try reader.string()
        let sessionIdentifier = try reader.string()
        let signature = try reader.string()
        let forwarding = try reader.boolean()
        guard reader.isAtEnd else { throw SSHDecodingError() }
        guard !sessionIdentifier.isEmpty, Self.verify(signature: signature, of: sessionIdentifier, by: hostKey)
        else { return nil }
        self.hostKey = Data(hostKey)
        self.sessionIdentifier = Data(sessionIdentifier)
        isForwarding = forwarding
    }

    /// Whether `signature` (`string format`, `string blob`) is `hostKey`'s over `data`:
    /// Ed25519, ECDSA on P-256, P-384 and P-521, and RSA with SHA-256 or SHA-512 (RFC 8332),
    /// the host key types OpenSSH offers.
    static func verify(signature: [UInt8], of data: [UInt8], by hostKey: [UInt8]) -> Bool {
        var key = SSHReader(hostKey)
        var signed = SSHReader(signature)
        guard let keyType = try? String(decoding: key.string(), as: UTF8.self),
            let format = try? String(decoding: signed.string(), as: UTF8.self),
            let blob = try? signed.string(), signed.isAtEnd
        else { return false }
        do {
            switch (keyType, format) {
            case ("ssh-ed25519", "ssh-ed25519"):
                let raw = try key.string()
                guard key.isAtEnd else { return false }
                return try Curve25519.Signing.PublicKey(rawRepresentation: raw).isValidSignature(blob, for: data)
            case ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256"):
                let point = try ecdsaPoint(&key, curve: "nistp256")
                return try P256.Signing.PublicKey(x963Representation: point)
                    .isValidSignature(
                        P256.Signing.ECDSASignature(rawRepresentation: try ecdsaRaw(blob, size: 32)), for: data)
            case ("ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384"):
                let point = try ecdsaPoint(&key, curve: "nistp384")
                return try P384.Signing.PublicKey(x963Representation: point)
                    .isValidSignature(
                        P384.Signing.ECDSASignature(rawRepresentation: try ecdsaRaw(blob, size: 48)), for: data)
            case ("ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521"):
                let point = try ecdsaPoint(&key, curve: "nistp521")
                return try P521.Signing.PublicKey(x963Representation: point)
                    .isValidSignature(
                        P521.Signing.ECDSASignature(rawRepresentation: try ecdsaRaw(blob, size: 66)), for: data)
            case ("ssh-rsa", "rsa-sha2-256"), ("ssh-rsa", "rsa-sha2-512"):
                let exponent = try key.string()
                let modulus = try key.string()
                guard key.isAtEnd else { return false }
                let publicKey = try _RSA.Signing.PublicKey(
                    n: Array(modulus.drop { $0 == 0 }), e: Array(exponent.drop { $0 == 0 }))
                let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: blob)
                return format == "rsa-sha2-256"
                    ? publicKey.isValidSignature(
                        rsaSignature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
                    : publicKey.isValidSignature(
                        rsaSignature, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
            default:
                return false
            }
        } catch {
            return false
        }
    }

    /// An ECDSA key's point, after its curve's name.
    private static func ecdsaPoint(_ key: inout SSHReader, curve: String) throws -> [UInt8] {
        guard String(decoding: try key.string(), as: UTF8.self) == curve else { throw SSHDecodingError() }
        let point = try key.string()
        guard key.isAtEnd else { throw SSHDecodingError() }
        return point
    }

    /// An SSH ECDSA signature (`mpint r`, `mpint s`) as the fixed-size `r ‖ s` swift-crypto reads.
    private static func ecdsaRaw(_ blob: [UInt8], size: Int) throws -> [UInt8] {
        var reader = SSHReader(blob)
        let r = try reader.string().drop { $0 == 0 }
        let s = try reader.string().drop { $0 == 0 }
        guard reader.isAtEnd, r.count <= size, s.count <= size else { throw SSHDecodingError() }
        return [UInt8](repeating: 0, count: size - r.count) + r + [UInt8](repeating: 0, count: size - s.count) + s
    }
}
