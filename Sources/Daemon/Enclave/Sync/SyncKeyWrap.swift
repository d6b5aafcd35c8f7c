import Crypto
import Foundation
import KeychainProtocol

/// The circle's sync key of one epoch, wrapped to one member (Docs/Sync.md, "The circle of
/// devices"): ECDH between a fresh P-256 key and the member's identity key, HKDF-SHA256 over the
/// shared secret with both public keys and the epoch, then AES-256-GCM with the epoch and the
/// member's id as associated data. Only that member's identity key unwraps it, and a wrap moved
/// to another epoch or member does not open.
///
/// Layout: the fresh public key (65 bytes, X9.63), then the sealed key (nonce, ciphertext, tag).
enum SyncKeyWrap {
    private static let label = Data("swift-keychain sync key wrap v1".utf8)

    /// A device's id: the first 16 bytes of SHA-256 of its identity public key (X9.63).
    static func deviceID(_ publicKey: P256.KeyAgreement.PublicKey) -> Data {
        Data(SHA256.hash(data: publicKey.x963Representation).prefix(16))
    }

    /// `key` wrapped to `member` for `epoch`.
    static func wrap(
        _ key: SymmetricKey, epoch: UInt32, to member: P256.KeyAgreement.PublicKey
    ) throws(KeychainError) -> Data {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        do {
            let wrapping = try wrappingKey(
                ephemeral.sharedSecretFromKeyAgreement(with: member), ephemeral.publicKey, member, epoch)
            let sealed = try key.withUnsafeBytes {
                try AES.GCM.seal($0, using: wrapping, authenticating: associatedData(member, epoch))
            }
            guard let combined = sealed.combined else { throw KeychainError.errSecInternalComponent }
            return ephemeral.publicKey.x963Representation + combined
        } catch {
            throw KeychainError(.errSecInternalComponent, "wrapping the sync key failed: \(error)")
        }
    }

    /// The key `wrapped` holds for `epoch`, unwrapped with this member's identity key.
    ///
    /// - Throws: `errSecDecode` when it is not wrapped to this member for this epoch, or was
    ///   altered.
    static func unwrap(
        _ wrapped: Data, epoch: UInt32, with identity: P256.KeyAgreement.PrivateKey
    ) throws(KeychainError) -> SymmetricKey {
        let wrapped = Data(wrapped)
        guard wrapped.count > 65,
            let ephemeral = try? P256.KeyAgreement.PublicKey(x963Representation: wrapped.prefix(65)),
            let shared = try? identity.sharedSecretFromKeyAgreement(with: ephemeral),
            let box = try? AES.GCM.SealedBox(combined: wrapped.dropFirst(65)),
            var key = try? AES.GCM.open(
                box, using: wrappingKey(shared, ephemeral, identity.publicKey, epoch),
                authenticating: associatedData(identity.publicKey, epoch))
        else {
            throw KeychainError(
                .errSecDecode, "the sync key of epoch \(epoch) is not wrapped to this device, or was altered")
        }
        defer { key.resetBytes(in: 0..<key.count) }
        return SymmetricKey(data: key)
    }

    private static func wrappingKey(
        _ shared: SharedSecret, _ ephemeral: P256.KeyAgreement.PublicKey, _ member: P256.KeyAgreement.PublicKey,
        _ epoch: UInt32
    ) -> SymmetricKey {
        var info = label
        info.append(ephemeral.x963Representation)
        info.append(member.x963Representation)
        withUnsafeBytes(of: epoch.bigEndian) { info.append(contentsOf: $0) }
        return shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: info, outputByteCount: 32)
    }

    private static func associatedData(_ member: P256.KeyAgreement.PublicKey, _ epoch: UInt32) -> Data {
        var data = label
        withUnsafeBytes(of: epoch.bigEndian) { data.append(contentsOf: $0) }
        data.append(deviceID(member))
        return data
    }
}
