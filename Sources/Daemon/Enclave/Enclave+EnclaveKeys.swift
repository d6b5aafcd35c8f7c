import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// Keys that never leave the Enclave (`kSecAttrTokenIDSecureEnclave`, CryptoKit's
/// `SecureEnclave.P256`): P-256 keys made here, handed out only sealed, and used only here.
///
/// The sealed form is what Apple's hardware gives as a key's `dataRepresentation` and keeps as
/// its keychain item's data: an opaque blob that only this Enclave opens. It holds, in the
/// clear, the key's accessibility, its access control, the access group it belongs to and its
/// public key, and, sealed with AES-256-GCM under a key derived from that accessibility's class
/// key (so a locked class cannot use it, and an erased keychain never again) with all of those
/// as associated data, the private key. Changing any clear field, or using the blob from
/// another group, another keychain or after an erase, fails. Its layout is
/// ``SealedEnclaveKey``'s, which apps read too.
extension Enclave {
    private static let sealingPurpose = "enclave-key"
    private static let associatedDataLabel = Data("swift-keychain enclave key v1".utf8)

    /// Makes a P-256 key, sealed to `accessibility`'s class key, `accessControl` and
    /// `accessGroup`.
    ///
    /// - Returns: the sealed key and its public key (X9.63).
    /// - Throws: errSecInteractionNotAllowed when the class is locked; errSecNotAvailable for
    ///   WhenPasscodeSet with no passcode.
    public func makeEnclaveKey(
        accessibility: Accessibility, accessControl: StoredAccessControl?, accessGroup: String
    ) throws(KeychainError) -> (sealedKey: Data, publicKey: Data) {
        let sealingKey = try enclaveKeySealingKey(accessibility)
        let privateKey = P256.Signing.PrivateKey()
        var sealed = SealedEnclaveKey(
            accessibility: accessibility, accessControl: accessControl, accessGroup: accessGroup,
            publicKey: privateKey.publicKey.x963Representation)
        var raw = privateKey.rawRepresentation
        defer { raw.resetBytes(in: 0..<raw.count) }
        guard
            let combined = try? AES.GCM.seal(
                raw, using: sealingKey, authenticating: Self.associatedDataLabel + sealed.clearFields
            ).combined
        else {
            throw KeychainError(.errSecInternalComponent, "sealing the new key failed")
        }
        sealed.sealedPrivateKey = combined
        return (sealed.encoded, sealed.publicKey)
    }

    /// Uses a sealed key: checks that it belongs to one of `callerGroups` (nil: the owner, who
    /// may use any) and that `grants` satisfy its access control, opens it and performs
    /// `operation`.
    ///
    /// - Throws: errSecDecode for bytes that are not a key this Enclave made (altered, from
    ///   another keychain, or from before an erase); errSecItemNotFound for a key of a group
    ///   the caller is not in; errSecInteractionNotAllowed carrying the access control when
    ///   the grants do not satisfy it, or when the class is locked; errSecParam for a digest
    ///   or a peer key that is not one.
    public func useEnclaveKey(
        _ sealedKey: Data, _ operation: EnclaveKeyOperation, callerGroups: [String]?, grants: [AuthenticationGrant]
    ) throws(KeychainError) -> SecretBytes {
        let sealed = try SealedEnclaveKey(decoding: sealedKey)
        if let callerGroups, !callerGroups.contains(sealed.accessGroup) {
            throw KeychainError(.errSecItemNotFound, "the key belongs to an access group the caller is not in")
        }
        var raw = try openEnclaveKey(sealed)
        defer { raw.resetBytes(in: 0..<raw.count) }
        // Checked only once the key is known to be this Enclave's: its access control is then
        // the one it was made with.
        if let accessControl = sealed.accessControl { try authorize(accessControl, grants: grants) }
        do {
            switch operation {
            case .sign(let digest):
                guard !digest.isEmpty else { throw KeychainError(.errSecParam, "an empty digest") }
                let key = try P256.Signing.PrivateKey(rawRepresentation: raw)
                return SecretBytes(try key.signature(for: PrecomputedDigest(bytes: digest)).derRepresentation)
            case .keyAgreement(let peer):
                guard let peerKey = try? P256.KeyAgreement.PublicKey(x963Representation: peer) else {
                    throw KeychainError(.errSecParam, "the other party's key is not a P-256 public key (X9.63)")
                }
                let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: raw)
                return try key.sharedSecretFromKeyAgreement(with: peerKey).withUnsafeBytes { SecretBytes($0) }
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecInternalComponent, "the Enclave key operation failed")
        }
    }

    /// A sealed key's private key (raw): wipe it after use.
    ///
    /// - Throws: errSecDecode for a key this Enclave did not make; errSecInteractionNotAllowed
    ///   when its class is locked.
    func openEnclaveKey(_ sealed: SealedEnclaveKey) throws(KeychainError) -> Data {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.sealedPrivateKey)
            return try AES.GCM.open(
                box, using: try enclaveKeySealingKey(sealed.accessibility),
                authenticating: Self.associatedDataLabel + sealed.clearFields)
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.errSecDecode, "the key was not made by this keychain's Enclave, or was altered")
        }
    }

    /// The key that seals Enclave keys of `accessibility`: derived from its class key.
    private func enclaveKeySealingKey(_ accessibility: Accessibility) throws(KeychainError) -> SymmetricKey {
        ClassKeySet.subkey(try classKeys(accessibility.protectionClass).classKey, Self.sealingPurpose)
    }
}
