import Crypto
import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    /// CryptoKit's `SecureEnclave` as iOS code uses it, with `import Crypto`: keys made in the
    /// Enclave whose signatures and secrets are swift-crypto's, restored from their
    /// `dataRepresentation`, and gated by their access control.
    @Suite struct SecureEnclaveTests {
        /// `body` fails with an `NSError` in `NSOSStatusErrorDomain` of `status`, as CryptoKit's
        /// `SecureEnclave` reports the keychain's errors.
        static func expectStatus<Result>(
            _ status: OSStatus, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Result
        ) {
            do {
                _ = try body()
                Issue.record("no error; expected \(status)", sourceLocation: sourceLocation)
            } catch {
                let error = error as NSError
                #expect(
                    error.domain == NSOSStatusErrorDomain && error.code == Int(status), "\(error)",
                    sourceLocation: sourceLocation)
            }
        }

        @Test func aSigningKeySignsAsSwiftCryptoVerifies() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(SecureEnclave.isAvailable)
            let key = try SecureEnclave.P256.Signing.PrivateKey()
            let message = Data("hello from the enclave".utf8)
            let signature = try key.signature(for: message)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(key.publicKey.compactRepresentation != nil, "compact representable by default")
            #expect(try key.signature(for: SHA256.hash(data: message)).derRepresentation.count > 0)

            // Restored from its data representation: the same key.
            let restored = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: key.dataRepresentation)
            #expect(restored.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
            #expect(key.publicKey.isValidSignature(try restored.signature(for: message), for: message))
            // Bytes that are not this Enclave's key are refused.
            Self.expectStatus(errSecDecode) {
                try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: Data("not a key".utf8))
            }
            var altered = key.dataRepresentation
            altered[altered.count - 1] ^= 1
            let tampered = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: altered)
            Self.expectStatus(errSecDecode) { try tampered.signature(for: message) }
        }

        @Test func aKeyAgreementKeySharesTheSecretSwiftCryptoComputes() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let key = try SecureEnclave.P256.KeyAgreement.PrivateKey()
            let other = P256.KeyAgreement.PrivateKey()
            let ours = try key.sharedSecretFromKeyAgreement(with: other.publicKey)
            let theirs = try other.sharedSecretFromKeyAgreement(with: key.publicKey)
            #expect(ours == theirs)
            let salt = Data("salt".utf8)
            #expect(
                ours.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: Data(), outputByteCount: 32)
                    == theirs.hkdfDerivedSymmetricKey(
                        using: SHA256.self, salt: salt, sharedInfo: Data(), outputByteCount: 32))
        }

        @Test func aKeyWithBiometryAnySignsAfterATouchOnly() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            var error: Unmanaged<CFError>?
            let control = try #require(
                SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, [.privateKeyUsage, .biometryAny], &error))
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: control, authenticationContext: context)
            #expect(prompt.sheets.withLock { $0.count } == 0)
            let signature = try key.signature(for: Data("login".utf8))
            #expect(key.publicKey.isValidSignature(signature, for: Data("login".utf8)))
            #expect(prompt.sheets.withLock { $0.count } == 1)
            // Without a way to prompt, the same key in a context that may not interact refuses.
            let quiet = LAContext.scripted(ScriptedPrompt([]))
            quiet.interactionNotAllowed = true
            let restored = try SecureEnclave.P256.Signing.PrivateKey(
                dataRepresentation: key.dataRepresentation, authenticationContext: quiet)
            Self.expectStatus(errSecInteractionNotAllowed) { try restored.signature(for: Data("login".utf8)) }
        }
    }
}
