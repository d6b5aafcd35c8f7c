import Crypto
import CryptoExtras
import Foundation
import Keychain
import Testing

@testable import KeychainSSH

#if canImport(Glibc)
import Glibc
#endif

extension SecItemAPITests {
    /// The agent protocol's answers, message by message: what it lists, what it signs, and a
    /// failure (never a crash or a hang) for everything else.
    @Suite struct SSHAgentProtocolTests {
        private func string(_ bytes: some Collection<UInt8>) -> [UInt8] {
            Array(SSHEncoding.string(bytes))
        }

        @Test func itListsSignsAndRefusesWhatItDoesNotDo() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let connection = SSHAgentConnection(
                client: SSHAgentClient(pid: getpid(), executable: "/usr/bin/test"),
                authentications: SSHAgentAuthentications(reuseWindow: 0))
            #expect(connection.answer([11]) == Data([12, 0, 0, 0, 0]), "no keys yet")
            let key = try SSHKeyStore.create(name: "unit", protection: .none)
            let listed = connection.answer([11])
            #expect(listed == Data([12, 0, 0, 0, 1]) + SSHEncoding.string(key.blob) + SSHEncoding.string("unit"))

            // A signature OpenSSH's format holds: the algorithm, then r and s as mpints.
            let data: [UInt8] = Array("session".utf8)
            let answer = connection.answer([13] + string(key.blob) + string(data) + [0, 0, 0, 0])
            #expect(answer.first == 14)
            var reader = SSHReader(answer.dropFirst())
            var signature = SSHReader(try reader.string())
            #expect(reader.isAtEnd)
            #expect(String(decoding: try signature.string(), as: UTF8.self) == "ecdsa-sha2-nistp256")
            var integers = SSHReader(try signature.string())
            func fixed(_ mpint: [UInt8]) -> [UInt8] {
                Array(repeating: 0, count: max(0, 32 - mpint.drop { $0 == 0 }.count)) + mpint.drop { $0 == 0 }
            }
            let raw = fixed(try integers.string()) + fixed(try integers.string())
            #expect(integers.isAtEnd && signature.isAtEnd)
            #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: data))

            let failure = Data([5])
            #expect(connection.answer([13] + string(key.blob) + string(data) + [0, 0, 0, 2]) == failure, "RSA flags")
            #expect(
                connection.answer([13] + string([1, 2, 3]) + string(data) + [0, 0, 0, 0]) == failure,
                "a key it does not hold")
            #expect(connection.answer([13] + string(key.blob) + [0, 0, 0, 9]) == failure, "truncated")
            #expect(
                connection.answer([13] + string(key.blob) + string(data) + [0, 0, 0, 0, 7]) == failure,
                "bytes left over")
            #expect(connection.answer([17]) == failure, "adding a key")
            #expect(connection.answer([19]) == failure, "removing every key")
            #expect(connection.answer([]) == failure)
            // A session-bind whose signature does not verify binds nothing.
            let bind =
                string(Array("session-bind@openssh.com".utf8)) + string(key.blob) + string([1]) + string([2]) + [0]
            #expect(connection.answer([27] + bind) == failure)
            #expect(connection.answer([27] + string(Array("other@example.com".utf8))) == failure)
        }

        /// A host key and its signature over a session identifier, as an SSH server makes them.
        private func sessionBind(
            _ host: Curve25519.Signing.PrivateKey, session: [UInt8],
            signedBy signer: Curve25519.Signing.PrivateKey? = nil, forwarded: Bool = false
        ) throws -> [UInt8] {
            let blob = string(Array("ssh-ed25519".utf8)) + string(Array(host.publicKey.rawRepresentation))
            let signature =
                string(Array("ssh-ed25519".utf8)) + string(Array(try (signer ?? host).signature(for: session)))
            return [27] + string(Array("session-bind@openssh.com".utf8)) + string(blob) + string(session)
                + string(signature) + [forwarded ? 1 : 0]
        }

        /// The host key's signature over the session identifier is checked: another key's
        /// signature (a program that claims a host's key it does not hold) binds nothing, and a
        /// bound connection is not bound again to another session.
        @Test func aSessionBindCountsOnlyWhenTheHostKeySignedIt() throws {
            let connection = SSHAgentConnection(
                client: SSHAgentClient(pid: getpid(), executable: "/usr/bin/ssh"),
                authentications: SSHAgentAuthentications(reuseWindow: 0))
            let host = Curve25519.Signing.PrivateKey()
            let session = Array(SHA256.hash(data: Data("exchange".utf8)))
            #expect(
                connection.answer(try sessionBind(host, session: session, signedBy: Curve25519.Signing.PrivateKey()))
                    == Data([5]))
            #expect(connection.answer(try sessionBind(host, session: session)) == Data([6]))
            #expect(connection.answer(try sessionBind(host, session: session)) == Data([6]), "the same binding again")
            #expect(
                connection.answer(try sessionBind(host, session: Array(SHA256.hash(data: Data("other".utf8)))))
                    == Data([5]))
        }

        /// Issue 57: the agent refused a forwarded bind but left the connection unbound, so the
        /// remote hop's own bind made it look local, and a reuse window granted to a local login
        /// served it. A connection that took a forwarding bind stays forwarded, whatever is bound
        /// after; each key's forwarding policy decides, and the reuse window never serves it.
        @Test func aForwardedConnectionStaysForwarded() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let open = try SSHKeyStore.create(name: "open", protection: .none)
            let guarded = try SSHKeyStore.create(name: "guarded", protection: .userPresence)
            let (hopHost, destinationHost) = (Curve25519.Signing.PrivateKey(), Curve25519.Signing.PrivateKey())
            let (hopSession, destination) = (
                Array(SHA256.hash(data: Data("to host A".utf8))), Array(SHA256.hash(data: Data("A to B".utf8)))
            )
            func login(_ key: SSHEnclaveKey) -> [UInt8] {
                let request =
                    string(destination) + [50] + string(Array("me".utf8)) + string(Array("ssh-connection".utf8))
                    + string(Array("publickey".utf8)) + [1] + string(Array("ecdsa-sha2-nistp256".utf8))
                    + string(Array(key.blob))
                return [13] + string(Array(key.blob)) + string(request) + [0, 0, 0, 0]
            }
            func connection(forwarded: Bool) throws -> SSHAgentConnection {
                let connection = SSHAgentConnection(
                    client: SSHAgentClient(pid: getpid(), executable: "/usr/bin/ssh"),
                    authentications: SSHAgentAuthentications(reuseWindow: 600))
                if forwarded {
                    #expect(
                        connection.answer(try sessionBind(hopHost, session: hopSession, forwarded: true)) == Data([6]))
                    #expect(
                        connection.answer(try sessionBind(hopHost, session: hopSession, forwarded: true)) == Data([6]),
                        "the same forwarding again")
                }
                // The hop's own bind, not marked: it names the destination, and makes nothing local.
                #expect(connection.answer(try sessionBind(destinationHost, session: destination)) == Data([6]))
                #expect(
                    connection.answer(try sessionBind(hopHost, session: hopSession, forwarded: true)) == Data([5]),
                    "bound: no forwarding bind after")
                return connection
            }
            let local = try connection(forwarded: false)
            let forwarded = try connection(forwarded: true)
            // A key without an access control signs for a forwarded request by default, as
            // OpenSSH's agent does; once the owner says refuse, it refuses forwarded requests only.
            #expect(forwarded.answer(login(open)).first == 14)
            #expect(try SSHForwardingPolicy.current(for: "open") == .allow)
            try SSHForwardingPolicy.set(.refuse, for: "open")
            #expect(forwarded.answer(login(open)) == Data([5]))
            #expect(local.answer(login(open)).first == 14)
            // A key with an access control refuses forwarded use by default, and takes no allow.
            #expect(try SSHForwardingPolicy.current(for: "guarded") == .refuse)
            #expect(forwarded.answer(login(guarded)) == Data([5]))
            #expect(throws: KeychainError.self) { try SSHForwardingPolicy.set(.allow, for: "guarded") }
            // Deleting a key forgets its policy.
            try SSHKeyStore.delete("open")
            _ = try SSHKeyStore.create(name: "open", protection: .none)
            #expect(try SSHForwardingPolicy.current(for: "open") == .allow)
        }

        /// ECDSA and RSA host keys verify as OpenSSH signs with them.
        @Test func ecdsaAndRSAHostSignaturesVerify() throws {
            let session = Array(SHA256.hash(data: Data("exchange".utf8)))
            let p256 = P256.Signing.PrivateKey()
            let raw = Array(try p256.signature(for: session).rawRepresentation)
            let ecdsaBlob =
                string(Array("ecdsa-sha2-nistp256".utf8)) + string(Array("nistp256".utf8))
                + string(Array(p256.publicKey.x963Representation))
            let ecdsaSignature =
                string(Array("ecdsa-sha2-nistp256".utf8))
                + string(
                    Array(SSHEncoding.mpint(unsigned: raw.prefix(32)) + SSHEncoding.mpint(unsigned: raw.suffix(32))))
            #expect(SSHSessionBinding.verify(signature: ecdsaSignature, of: session, by: ecdsaBlob))
            #expect(!SSHSessionBinding.verify(signature: ecdsaSignature, of: Array(session.reversed()), by: ecdsaBlob))
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let components = try rsa.publicKey.getKeyPrimitives()
            let rsaBlob =
                string(Array("ssh-rsa".utf8)) + Array(SSHEncoding.mpint(unsigned: components.publicExponent))
                + Array(SSHEncoding.mpint(unsigned: components.modulus))
            for (format, signature) in [
                ("rsa-sha2-256", try rsa.signature(for: SHA256.hash(data: session), padding: .insecurePKCS1v1_5)),
                ("rsa-sha2-512", try rsa.signature(for: SHA512.hash(data: session), padding: .insecurePKCS1v1_5)),
            ] {
                let encoded = string(Array(format.utf8)) + string(Array(signature.rawRepresentation))
                #expect(SSHSessionBinding.verify(signature: encoded, of: session, by: rsaBlob), "\(format)")
                #expect(!SSHSessionBinding.verify(signature: encoded, of: session + [0], by: rsaBlob), "\(format)")
            }
        }

        /// What a key that asks the owner signs: a user authentication for the bound session
        /// with this key, or a file signature; nothing else, whatever the sheet would say.
        @Test func aGuardedKeySignsOnlyWhatTheSheetCanName() throws {
            let host = Curve25519.Signing.PrivateKey()
            let session = Array(SHA256.hash(data: Data("exchange".utf8)))
            var reader = SSHReader(
                try sessionBind(host, session: session).dropFirst(1 + 4 + "session-bind@openssh.com".utf8.count))
            let binding = try #require(try SSHSessionBinding(&reader))
            let keyBlob = Data([1, 2, 3])
            func request(
                session: [UInt8], method: String = "publickey", key: Data = keyBlob, hostKey: Data? = nil
            ) -> [UInt8] {
                session.isEmpty
                    ? []
                    : string(session) + [50] + string(Array("git".utf8)) + string(Array("ssh-connection".utf8))
                        + string(Array(method.utf8)) + [1]
                        + string(Array("ecdsa-sha2-nistp256".utf8)) + string(Array(key))
                        + (hostKey.map { string(Array($0)) } ?? [])
            }
            let login = SSHSignedData(request(session: session), keyBlob: keyBlob)
            #expect(login == .userAuthentication(sessionIdentifier: Data(session), user: "git", hostKey: nil))
            #expect(
                login.purpose(boundTo: binding)?.sheet
                    == "to log in to the host with key \(binding.hostFingerprint) as git")
            #expect(login.purpose(boundTo: nil) == nil, "no session bound")
            #expect(
                SSHSignedData(request(session: session.reversed()), keyBlob: keyBlob).purpose(boundTo: binding) == nil,
                "another session")
            #expect(SSHSignedData(request(session: session, key: Data([9])), keyBlob: keyBlob) == .other, "another key")
            let hostbound = "publickey-hostbound-v00@openssh.com"
            #expect(
                SSHSignedData(request(session: session, method: hostbound, hostKey: binding.hostKey), keyBlob: keyBlob)
                    .purpose(boundTo: binding) != nil)
            #expect(
                SSHSignedData(request(session: session, method: hostbound, hostKey: Data([7])), keyBlob: keyBlob)
                    .purpose(boundTo: binding) == nil, "another host")
            let file =
                Array("SSHSIG".utf8) + string(Array("git".utf8)) + string([]) + string(Array("sha512".utf8))
                + string(Array(repeating: 1, count: 64))
            #expect(
                SSHSignedData(file, keyBlob: keyBlob).purpose(boundTo: nil)?.sheet
                    == "to make a “git” signature (ssh-keygen -Y sign)")
            #expect(SSHSignedData(Array("anything at all".utf8), keyBlob: keyBlob).purpose(boundTo: binding) == nil)
        }
    }
}
