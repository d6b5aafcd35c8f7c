import Foundation
import KeychainProtocol
import Testing

@testable import SecretService

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` session of the Secret Service API: both sides agree
/// on the key, a secret crosses in both directions, and what would weaken the key or is not a
/// secret of this session is refused. Checked against a client others wrote: SecretStorage's
/// (Python), whose `dhcrypto` and `format_secret` libsecret's clients interoperate with.
@Suite struct SecretSessionKeyTests {
    @Test func bothSidesAgreeAndASecretCrossesEachWay() throws {
        let clientExponent = SecretSessionKey.randomExponent()
        let (service, servicePublicKey) = try SecretSessionKey.negotiate(
            clientPublicKey: SecretSessionKey.publicKey(of: clientExponent))
        #expect(servicePublicKey.count == 128)
        let client = try SecretSessionKey(privateExponent: clientExponent, peerPublicKey: servicePublicKey)
        for secret in ["", "hunter2", String(repeating: "x", count: 16), "🔑 café"] {
            let sent = service.encrypt(SecretBytes(utf8: secret))
            #expect(sent.parameters.count == 16)
            #expect(sent.value.count % 16 == 0 && sent.value.count > secret.utf8.count)
            let received = try client.decrypt(parameters: sent.parameters, value: sent.value)
            #expect(received.withUnsafeBytes { Array($0) } == Array(secret.utf8))
        }
    }

    /// The service's private exponents are 256 random bits, at least 2, and differ between
    /// sessions: twice the 128-bit strength, where a full 1024-bit exponent cost four times the
    /// CPU for no strength the group has.
    @Test func aPrivateExponentIs256RandomBits() {
        let exponents = (0..<8).map { _ in SecretSessionKey.randomExponent() }
        for exponent in exponents {
            #expect(exponent.count == 32)
            #expect(exponent.last.map { $0 & 2 == 2 } == true)
        }
        #expect(Set(exponents).count == exponents.count)
    }

    /// Public keys that would make the shared secret one anybody knows, or that are not
    /// numbers of the group, are refused.
    @Test func aWeakOrForeignPublicKeyIsRefused() {
        let prime = SecretSessionKey.prime
        let last = prime.count - 1
        for key in [
            [0], [1], Array(prime.dropLast()) + [prime[last] - 1], prime,
            [UInt8](repeating: 0xFF, count: 128),
        ] {
            #expect(throws: SecretSessionError.self) {
                try SecretSessionKey.negotiate(clientPublicKey: SecretSessionKey.padded(key))
            }
        }
        #expect(throws: SecretSessionError.self) {
            try SecretSessionKey.negotiate(clientPublicKey: [1] + [UInt8](repeating: 0, count: 128))
        }
    }

    @Test func aSecretNotOfThisSessionIsRefused() throws {
        let (key, _) = try SecretSessionKey.negotiate(clientPublicKey: SecretSessionKey.publicKey(of: [0x30, 0x39]))
        let (other, _) = try SecretSessionKey.negotiate(clientPublicKey: SecretSessionKey.publicKey(of: [0x30, 0x39]))
        let sent = key.encrypt(SecretBytes(utf8: "hunter2"))
        #expect(throws: SecretSessionError.self) {
            try key.decrypt(parameters: Array(sent.parameters.prefix(8)), value: sent.value)
        }
        #expect(throws: SecretSessionError.self) {
            try key.decrypt(parameters: sent.parameters, value: Array(sent.value.dropLast()))
        }
        #expect(throws: SecretSessionError.self) { try key.decrypt(parameters: sent.parameters, value: []) }
        // Another session's key: the padding does not check out (or, once in 256, garbage of
        // the right shape; never the secret).
        let foreign = try? other.decrypt(parameters: sent.parameters, value: sent.value)
        #expect(foreign.map { $0.withUnsafeBytes { Array($0) } } != Array("hunter2".utf8))
    }

    /// SecretStorage's client (Debian's python3-secretstorage) negotiates with the service's
    /// side and each decrypts what the other encrypted.
    @Test func secretStoragesClientAndTheServiceUnderstandEachOther() throws {
        let script = """
            import sys
            import secretstorage.dhcrypto as dh, secretstorage.util as util
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            session = dh.Session()
            print(session.my_public_key.to_bytes(128, 'big').hex(), flush=True)
            session.set_server_public_key(int(sys.stdin.readline(), 16))
            session.object_path = '/org/freedesktop/secrets/session/s1'
            _, iv, value, _ = util.format_secret(session, 'from python: hunter2', 'text/plain')
            print(iv.hex(), value.hex(), flush=True)
            iv, value = (bytes.fromhex(part) for part in sys.stdin.readline().split())
            decryptor = Cipher(algorithms.AES(session.aes_key), modes.CBC(iv)).decryptor()
            padded = decryptor.update(value) + decryptor.finalize()
            print(padded[:-padded[-1]].decode(), flush=True)
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", script]
        let input = Pipe()
        let output = Pipe()
        python.standardInput = input
        python.standardOutput = output
        try python.run()
        defer {
            if python.isRunning { python.terminate() }
            python.waitUntilExit()
        }
        var lines = LineReader(output.fileHandleForReading)
        let clientPublicKey = try #require(Self.bytes(hex: lines.next()), "SecretStorage is not installed")
        let (service, servicePublicKey) = try SecretSessionKey.negotiate(clientPublicKey: clientPublicKey)
        input.fileHandleForWriting.write(Data((Self.hex(servicePublicKey) + "\n").utf8))
        let sent = lines.next().split(separator: " ").compactMap { Self.bytes(hex: String($0)) }
        try #require(sent.count == 2)
        let secret = try service.decrypt(parameters: sent[0], value: sent[1])
        #expect(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "from python: hunter2")
        let reply = service.encrypt(SecretBytes(utf8: "from the keychain: correct horse"))
        input.fileHandleForWriting.write(Data("\(Self.hex(reply.parameters)) \(Self.hex(reply.value))\n".utf8))
        #expect(lines.next() == "from the keychain: correct horse")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)
        }
    }

    /// Lines of a child's output, one at a time.
    struct LineReader {
        let handle: FileHandle
        var buffered = Data()

        init(_ handle: FileHandle) {
            self.handle = handle
        }

        mutating func next() -> String {
            while !buffered.contains(10) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffered.append(chunk)
            }
            let end = buffered.firstIndex(of: 10) ?? buffered.endIndex
            let line = String(decoding: buffered[buffered.startIndex..<end], as: UTF8.self)
            buffered = end < buffered.endIndex ? Data(buffered[(end + 1)...]) : Data()
            return line
        }
    }
}
