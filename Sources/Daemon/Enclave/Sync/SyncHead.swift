import Crypto
import Foundation
import KeychainProtocol

/// A device's head on the remote (`devices/<D>/head`, Docs/Sync.md "The records"): its sequence
/// number, one more at each publish, and a digest of the (name, clock) pairs of every record it
/// has there, signed by its identity key. A record removed or held back on the remote, or an
/// older head put back, is seen by its digest or its sequence.
///
/// Layout: `swift-keychain device head v1`, the device's id (16 bytes), the sequence (8), the
/// digest (32), then the ECDSA P-256 signature (64, raw) over all of it.
public struct SyncHead: Sendable, Equatable {
    private static let label = "swift-keychain device head v1"

    /// The writer's id.
    public var device: Data
    /// One more at each publish.
    public var sequence: UInt64
    /// ``digest(of:)`` of the device's records.
    public var digest: Data
    var signature: Data

    /// SHA-256 over the (name, clock) pairs, sorted by name.
    public static func digest(of records: [(name: Data, clock: SyncTimestamp)]) -> Data {
        var hash = SHA256()
        for record in records.sorted(by: { $0.name.lexicographicallyPrecedes($1.name) }) {
            hash.update(data: record.name)
            hash.update(data: record.clock.encoded)
        }
        return Data(hash.finalize())
    }

    var body: Data {
        var writer = WireWriter()
        writer.string(Self.label)
        writer.data(device)
        writer.u64(sequence)
        writer.data(digest)
        return Data(writer.finish())
    }

    /// The head's bytes, as the remote stores them.
    public var encoded: Data { body + signature }

    /// Reads a head and checks its signature by `writer` (its X9.63 public key).
    ///
    /// - Throws: `errSecDecode` for bytes that are not a head of this format, or not signed by
    ///   `writer`.
    public static func decode(_ bytes: Data, writer: Data) throws(KeychainError) -> SyncHead {
        let refused = KeychainError(.errSecDecode, "a device's head on the remote is malformed or not its own")
        guard bytes.count > 64 else { throw refused }
        var reader = WireReader(Array(bytes.dropLast(64)))
        let head: SyncHead
        do throws(WireError) {
            guard try reader.string(max: 64) == label else { throw WireError("another format") }
            head = SyncHead(
                device: try reader.data(max: 16), sequence: try reader.u64(), digest: try reader.data(max: 32),
                signature: Data(bytes.suffix(64)))
            try reader.finish()
        } catch {
            throw refused
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: writer),
            SyncDeviceList.Member(name: "", publicKey: writer).id == head.device,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: head.signature),
            key.isValidSignature(signature, for: head.body)
        else { throw refused }
        return head
    }
}
