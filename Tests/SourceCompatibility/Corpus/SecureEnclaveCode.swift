// The idioms of iOS code on CryptoKit's SecureEnclave (with `import Crypto` for
// `import CryptoKit`): a signing key made with an access control, kept as its
// dataRepresentation and restored, and a key-agreement key deriving a symmetric key.
import Crypto
import Foundation
import LocalAuthentication
import Security

enum SecureEnclaveCode {
    static func makeSigningKey() throws -> SecureEnclave.P256.Signing.PrivateKey {
        var error: Unmanaged<CFError>?
        guard
            let access = SecAccessControlCreateWithFlags(
                kCFAllocatorDefault, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, &error)
        else {
            throw error!.takeRetainedValue() as Error
        }
        return try SecureEnclave.P256.Signing.PrivateKey(accessControl: access, authenticationContext: LAContext())
    }

    static func signAndVerify(_ key: SecureEnclave.P256.Signing.PrivateKey) -> Bool {
        let challenge = "server challenge".data(using: .utf8)!
        guard let signature = try? key.signature(for: challenge) else { return false }
        return key.publicKey.isValidSignature(signature, for: challenge)
    }

    static func restore(_ stored: Data) -> SecureEnclave.P256.Signing.PrivateKey? {
        try? SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: stored)
    }

    static func agreeOnAKey() -> Bool {
        guard SecureEnclave.isAvailable, let ours = try? SecureEnclave.P256.KeyAgreement.PrivateKey() else {
            return false
        }
        let theirs = P256.KeyAgreement.PrivateKey()
        guard let secret = try? ours.sharedSecretFromKeyAgreement(with: theirs.publicKey),
            let theirSecret = try? theirs.sharedSecretFromKeyAgreement(with: ours.publicKey)
        else { return false }
        let key = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: Data(), sharedInfo: Data(), outputByteCount: 32)
        let sealed = try? AES.GCM.seal(Data("note".utf8), using: key).combined
        let theirKey = theirSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: Data(), sharedInfo: Data(), outputByteCount: 32)
        guard let sealed, let box = try? AES.GCM.SealedBox(combined: sealed) else { return false }
        return (try? AES.GCM.open(box, using: theirKey)) == Data("note".utf8)
    }
}
