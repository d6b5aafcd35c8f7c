import Crypto
import Foundation
import Keychain
import Testing

@testable import KeychainSSH

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
            let connection = SSHAgentConnection(client: "test", authentications: SSHAgentAuthentications(reuseWindow: 0))
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
            func fixed(_ mpint: [UInt8]) -> [UInt8] { Array(repeating: 0, count: max(0, 32 - mpint.drop { $0 == 0 }.count)) + mpint.drop { $0 == 0 } }
            let raw = fixed(try integers.string()) + fixed(try integers.string())
            #expect(integers.isAtEnd && signature.isAtEnd)
            #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: data))

            let failure = Data([5])
            #expect(connection.answer([13] + string(key.blob) + string(data) + [0, 0, 0, 2]) == failure, "RSA flags")
            #expect(connection.answer([13] + string([1, 2, 3]) + string(data) + [0, 0, 0, 0]) == failure, "a key it does not hold")
            #expect(connection.answer([13] + string(key.blob) + [0, 0, 0, 9]) == failure, "truncated")
            #expect(connection.answer([13] + string(key.blob) + string(data) + [0, 0, 0, 0, 7]) == failure, "bytes left over")
            #expect(connection.answer([17]) == failure, "adding a key")
            #expect(connection.answer([19]) == failure, "removing every key")
            #expect(connection.answer([]) == failure)
            let bind = string(Array("session-bind@openssh.com".utf8)) + string(key.blob) + string([1]) + string([2]) + [0]
            #expect(connection.answer([27] + bind) == Data([6]))
            #expect(connection.answer([27] + string(Array("other@example.com".utf8))) == failure)
        }
    }
}
