import Crypto
import Foundation
import KeychainProtocol
import Testing

/// Enclave keys through keychaind: made in the daemon, handed out sealed, used only there and
/// only while their class is unlocked. (Their group and access control are checked by the same
/// server code embedded mode runs: EnclaveKeyTests.)
@Suite(.serialized) struct DaemonEnclaveKeyTests {
    private func status(_ result: Result<KeychainReply, KeychainError>?) -> Int32? {
        switch result {
        case .success?: 0
        case .failure(let error)?: error.status
        case nil: nil
        }
    }

    @Test func theDaemonMakesSignsAndAgreesButGivesOutOnlyTheSealedKey() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let client = try RawDaemonClient(socket: daemon.socket)
        guard
            case .success(.enclaveKey(let sealedKey, let publicBytes))? = client.exchange(
                .createEnclaveKey(accessibility: .whenUnlockedThisDeviceOnly, accessControl: nil))
        else {
            Issue.record("the daemon made no key")
            return
        }
        let publicKey = try P256.Signing.PublicKey(x963Representation: publicBytes)
        // The sealed key does not hold the private key in the clear: no 32-byte window of it is
        // a scalar whose public key is this one.
        for start in 0...(sealedKey.count - 32) {
            if let candidate = try? P256.Signing.PrivateKey(rawRepresentation: sealedKey[start..<(start + 32)]) {
                #expect(
                    candidate.publicKey.x963Representation != publicBytes, "the private key is in the clear at \(start)"
                )
            }
        }
        let message = Data("ssh session".utf8)
        let digest = Data(SHA256.hash(data: message))
        guard
            case .success(.keyOutput(let signature))? = client.exchange(
                .useEnclaveKey(EnclaveKeyUse(sealedKey: sealedKey, operation: .sign(digest: digest))))
        else {
            Issue.record("the daemon did not sign")
            return
        }
        #expect(
            publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(derRepresentation: signature.copyData()), for: message))
        let other = P256.KeyAgreement.PrivateKey()
        guard
            case .success(.keyOutput(let secret))? = client.exchange(
                .useEnclaveKey(
                    EnclaveKeyUse(
                        sealedKey: sealedKey,
                        operation: .keyAgreement(peerPublicKey: other.publicKey.x963Representation))))
        else {
            Issue.record("the daemon did not agree a secret")
            return
        }
        let expected = try other.sharedSecretFromKeyAgreement(
            with: P256.KeyAgreement.PublicKey(x963Representation: publicBytes)
        ).withUnsafeBytes { Data($0) }
        #expect(secret.copyData() == expected)
        // A peer key that is not a point, an empty digest, a changed byte: refused.
        #expect(
            status(
                client.exchange(
                    .useEnclaveKey(
                        EnclaveKeyUse(
                            sealedKey: sealedKey, operation: .keyAgreement(peerPublicKey: Data(repeating: 4, count: 65))
                        )))) == KeychainError.errSecParam.status)
        #expect(
            status(
                client.exchange(.useEnclaveKey(EnclaveKeyUse(sealedKey: sealedKey, operation: .sign(digest: Data())))))
                == KeychainError.errSecParam.status)
        var altered = sealedKey
        altered[altered.count - 1] ^= 1
        #expect(
            status(client.exchange(.useEnclaveKey(EnclaveKeyUse(sealedKey: altered, operation: .sign(digest: digest)))))
                == KeychainError.errSecDecode.status)
        // After a lock the key cannot be used until the class opens again.
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["lock"]).status == 0)
        #expect(
            status(
                client.exchange(.useEnclaveKey(EnclaveKeyUse(sealedKey: sealedKey, operation: .sign(digest: digest)))))
                == KeychainError.errSecInteractionNotAllowed.status)
    }
}
