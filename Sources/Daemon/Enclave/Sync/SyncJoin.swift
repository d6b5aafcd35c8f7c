import Crypto
import Foundation
import KeychainProtocol

/// The join's numeric comparison (Docs/Sync.md, "Joining"): commit, then reveal. The joining
/// machine commits to its key and a nonce; a member answers with a nonce of its own, signed; the
/// joining machine reveals its nonce; the six-digit code comes from both keys and both nonces.
/// Neither side can choose the code, and the remote between them learns it only when nothing it
/// wrote can change any more: one guess per answer.
public enum SyncJoin {
    /// The size of each nonce.
    public static let nonceSize = 32

    /// A machine's request to join, as `circle/requests/<id>` holds it.
    ///
    /// Layout: `swift-keychain join request v2`, the name, the public key (X9.63, 65 bytes), the
    /// commitment (32), and the nonce (32) once revealed, absent before.
    public struct Request: Sendable, Equatable {
        private static let label = "swift-keychain join request v2"

        /// The name the owner gives the machine.
        public var name: String
        /// Its identity public key, X9.63.
        public var publicKey: Data
        /// ``SyncJoin/commitment(publicKey:nonce:)`` of its key and nonce.
        public var commitment: Data
        /// The nonce, once the machine has revealed it; nil before.
        public var nonce: Data?

        /// A request.
        public init(name: String, publicKey: Data, commitment: Data, nonce: Data? = nil) {
            self.name = name
            self.publicKey = publicKey
            self.commitment = commitment
            self.nonce = nonce
        }

        /// The machine asking, as the list would hold it.
        public var member: SyncDeviceList.Member { SyncDeviceList.Member(name: name, publicKey: publicKey) }

        /// The request's bytes.
        public var encoded: Data {
            var writer = WireWriter()
            writer.string(Self.label)
            writer.string(name)
            writer.data(publicKey)
            writer.data(commitment)
            writer.optional(nonce) { $0.data($1) }
            return Data(writer.finish())
        }

        /// The request `bytes` hold, or nil for anything else: another format, a key that is not
        /// 65 bytes, a commitment or nonce of the wrong size, or a nonce that does not open the
        /// commitment.
        public static func decode(_ bytes: [UInt8]) -> Request? {
            var reader = WireReader(bytes)
            do throws(WireError) {
                guard try reader.string(max: 64) == label else { return nil }
                let request = Request(
                    name: try reader.string(max: 256), publicKey: try reader.data(max: 65),
                    commitment: try reader.data(max: 32),
                    nonce: try reader.optional { (reader: inout WireReader) throws(WireError) in
                        try reader.data(max: nonceSize)
                    })
                try reader.finish()
                guard request.publicKey.count == 65, request.commitment.count == 32 else { return nil }
                if let nonce = request.nonce {
                    guard SyncJoin.commitment(publicKey: request.publicKey, nonce: nonce) == request.commitment else {
                        return nil
                    }
                }
                return request
            } catch {
                return nil
            }
        }
    }

    /// A member's answer to one request, as `circle/answers/<joining id>/<member id>` holds it.
    ///
    /// Layout: `swift-keychain join answer v1`, the joining machine's id (16), the commitment it
    /// answers (32), the member's id (16), the member's nonce (32), then the member's ECDSA P-256
    /// signature (64, raw) over all of it.
    public struct Answer: Sendable, Equatable {
        private static let label = "swift-keychain join answer v1"

        /// The id of the machine whose request it answers.
        public var joining: Data
        /// The commitment it answers.
        public var commitment: Data
        /// The id of the member that answers.
        public var member: Data
        /// The member's nonce.
        public var nonce: Data
        var signature: Data

        /// `identity`'s answer, with `nonce`, to `request`.
        public static func make(
            to request: Request, nonce: Data, identity: P256.Signing.PrivateKey
        ) throws(KeychainError) -> Answer {
            var answer = Answer(
                joining: request.member.id, commitment: request.commitment,
                member: SyncDeviceList.Member(name: "", publicKey: identity.publicKey.x963Representation).id,
                nonce: nonce, signature: Data())
            do {
                answer.signature = try identity.signature(for: answer.body).rawRepresentation
            } catch {
                throw KeychainError(.errSecInternalComponent, "signing the answer to a join request failed: \(error)")
            }
            return answer
        }

        private var body: Data {
            var writer = WireWriter()
            writer.string(Self.label)
            writer.data(joining)
            writer.data(commitment)
            writer.data(member)
            writer.data(nonce)
            return Data(writer.finish())
        }

        /// The answer's bytes.
        public var encoded: Data { body + signature }

        /// The answer `bytes` hold, its signature checked with `member`'s key, or nil for anything
        /// else, or for an answer another key signed.
        public static func decode(_ bytes: [UInt8], signedBy member: SyncDeviceList.Member) -> Answer? {
            guard bytes.count > 64 else { return nil }
            var reader = WireReader(Array(bytes.dropLast(64)))
            do throws(WireError) {
                guard try reader.string(max: 64) == label else { return nil }
                let answer = Answer(
                    joining: try reader.data(max: 16), commitment: try reader.data(max: 32),
                    member: try reader.data(max: 16), nonce: try reader.data(max: nonceSize),
                    signature: Data(bytes.suffix(64)))
                try reader.finish()
                guard answer.member == member.id, answer.nonce.count == nonceSize,
                    let key = try? P256.Signing.PublicKey(x963Representation: member.publicKey),
                    let signature = try? P256.Signing.ECDSASignature(rawRepresentation: answer.signature),
                    key.isValidSignature(signature, for: answer.body)
                else { return nil }
                return answer
            } catch {
                return nil
            }
        }
    }

    /// A fresh nonce.
    public static func nonce() -> Data {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
    }

    /// The commitment to a joining machine's key and nonce:
    /// `SHA-256("swift-keychain join commitment v1" ‖ publicKey ‖ nonce)`.
    public static func commitment(publicKey: Data, nonce: Data) -> Data {
        var hash = SHA256()
        hash.update(data: Data("swift-keychain join commitment v1".utf8))
        hash.update(data: publicKey)
        hash.update(data: nonce)
        return Data(hash.finalize())
    }

    /// The six digits the joining machine shows and the owner types on the member:
    /// `SHA-256("swift-keychain join code v1" ‖ member's key ‖ joining key ‖ commitment ‖
    /// member's nonce ‖ joining nonce)`, its first eight bytes big-endian modulo 10⁶ (a bias
    /// below 10⁻¹³).
    public static func code(
        member: Data, joining: Data, commitment: Data, memberNonce: Data, joiningNonce: Data
    ) -> String {
        var hash = SHA256()
        hash.update(data: Data("swift-keychain join code v1".utf8))
        for part in [member, joining, commitment, memberNonce, joiningNonce] { hash.update(data: part) }
        let number = hash.finalize().prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000
        let digits = String(number)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}
