import Foundation
import Security
import Testing

/// Whether `signer` signs `message` (ECDSA over SHA-256, X9.62) so that the public key of
/// `owner` verifies it: the check that a key found again in the keychain is the key made.
func signatureVerifies(signer: SecKey, publicKeyOf owner: SecKey, _ message: Data) throws -> Bool {
    let algorithm = SecKeyAlgorithm.ecdsaSignatureMessageX962SHA256
    let signature = try #require(SecKeyCreateSignature(signer, algorithm, message as CFData, nil))
    let publicKey = try #require(SecKeyCopyPublicKey(owner))
    return SecKeyVerifySignature(publicKey, algorithm, message as CFData, signature, nil)
}
