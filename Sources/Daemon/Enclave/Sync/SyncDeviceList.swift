import Crypto
import Foundation
import KeychainProtocol

/// The circle's list of devices (Docs/Sync.md, "The circle of devices"): its members, each a name
/// and an identity public key, the sync key's epoch, a version one higher than the last and the
/// digest of that last one, signed by a member of it. A device keeps the lists it accepted and
/// refuses one that is older, or signed by anyone not in the one before it: write access to the
/// remote alone adds nobody, and brings nobody back. Two different lists that each follow one
/// version are a fork (``follows(_:)``).
///
/// Layout: `swift-keychain device list v2`, the version (8 bytes), SHA-256 of the previous
/// version's bytes (32; zeros for version 1), the epoch (4), the number of members (4) and each
/// member sorted by id (its id, 16 bytes; its name; its public key, X9.63), the signer's id
/// (16), then the signer's ECDSA P-256 signature (64 bytes, raw) over all of it. A list of
/// `v1` (before the digest) is read, with no digest, so that a circle made before it goes on.
public struct SyncDeviceList: Sendable, Equatable {
    /// A device of the circle.
    public struct Member: Sendable, Hashable {
        /// The name the owner gave it.
        public var name: String
        /// The identity public key, X9.63 (65 bytes).
        public var publicKey: Data

        /// The first 16 bytes of SHA-256 of the public key.
        /// A member.
        public init(name: String, publicKey: Data) {
            self.name = name
            self.publicKey = publicKey
        }

        public var id: Data { Data(SHA256.hash(data: publicKey).prefix(16)) }
    }

    private static let label = "swift-keychain device list v2"
    private static let firstLabel = "swift-keychain device list v1"

    /// One more than the list before it.
    public var version: UInt64
    /// SHA-256 of the list before it (``digest``); zeros for a circle's first; nil for a list of
    /// the first format, which named none.
    public var previous: Data?
    /// The sync key's epoch.
    public var epoch: UInt32
    /// Sorted by id.
    public private(set) var members: [Member]
    /// The id of the member that signed it.
    public var signer: Data
    var signature: Data

    /// The first list of a circle: its one device, which signs it.
    static func first(name: String, identity: P256.Signing.PrivateKey) throws(KeychainError) -> SyncDeviceList {
        var list = SyncDeviceList(
            version: 1, previous: Data(count: 32), epoch: 1,
            members: [Member(name: name, publicKey: identity.publicKey.x963Representation)], signer: Data(),
            signature: Data())
        try list.sign(with: identity)
        return list
    }

    /// The next version, with `members` and `epoch` (a new one when a device leaves), signed by
    /// `identity`, which must be a member of this one.
    func next(
        members: [Member], epoch: UInt32, signedBy identity: P256.Signing.PrivateKey
    ) throws(KeychainError)
        -> SyncDeviceList
    {
        guard self.members.contains(where: { $0.publicKey == identity.publicKey.x963Representation }) else {
            throw KeychainError(.errSecParam, "only a device of the circle changes its list")
        }
        var list = SyncDeviceList(
            version: version + 1, previous: digest, epoch: epoch,
            members: members.sorted { $0.id.lexicographicallyPrecedes($1.id) }, signer: Data(), signature: Data())
        try list.sign(with: identity)
        return list
    }

    private mutating func sign(with identity: P256.Signing.PrivateKey) throws(KeychainError) {
        signer = Member(name: "", publicKey: identity.publicKey.x963Representation).id
        do {
            signature = try identity.signature(for: body).rawRepresentation
        } catch {
            throw KeychainError(.errSecInternalComponent, "signing the device list failed: \(error)")
        }
    }

    private var body: Data {
        var writer = WireWriter()
        writer.string(previous == nil ? Self.firstLabel : Self.label)
        writer.u64(version)
        if let previous { writer.data(previous) }
        writer.u32(epoch)
        writer.array(members) { writer, member in
            writer.data(member.id)
            writer.string(member.name)
            writer.data(member.publicKey)
        }
        writer.data(signer)
        return Data(writer.finish())
    }

    /// The list's bytes, as the remote stores them.
    public var encoded: Data { body + signature }

    /// SHA-256 of ``encoded``: what the next version names.
    public var digest: Data { Data(SHA256.hash(data: encoded)) }

    /// Reads a list's structure; it is trusted only once ``accept(after:trusting:)`` says so.
    ///
    /// - Throws: `errSecDecode` for anything that is not a list of this format.
    public static func decode(_ bytes: Data) throws(KeychainError) -> SyncDeviceList {
        let malformed = KeychainError(.errSecDecode, "the circle's device list on the remote is malformed")
        guard bytes.count > 64 else { throw malformed }
        var reader = WireReader(Array(bytes.dropLast(64)))
        do throws(WireError) {
            let format = try reader.string(max: 64)
            guard format == label || format == firstLabel else { throw WireError("another format") }
            let version = try reader.u64()
            let previous = format == label ? try reader.data(max: 32) : nil
            guard previous.map({ $0.count == 32 }) ?? true else { throw WireError("a digest of another size") }
            let epoch = try reader.u32()
            let members = try reader.array(max: 256) { (reader: inout WireReader) throws(WireError) -> Member in
                let id = try reader.data(max: 16)
                let member = Member(name: try reader.string(max: 256), publicKey: try reader.data(max: 65))
                guard member.id == id else { throw WireError("a member whose id is not its key's") }
                return member
            }
            let signer = try reader.data(max: 16)
            try reader.finish()
            let list = SyncDeviceList(
                version: version, previous: previous, epoch: epoch, members: members, signer: signer,
                signature: Data(bytes.suffix(64)))
            guard list.members == members.sorted(by: { $0.id.lexicographicallyPrecedes($1.id) }) else {
                throw WireError("members out of order")
            }
            return list
        } catch {
            throw malformed
        }
    }

    /// Whether this list is a valid next version of `earlier`: one version later, naming its
    /// digest, and signed by one of its members. Two different lists that both follow one
    /// version are a fork of the circle's history.
    public func follows(_ earlier: SyncDeviceList) -> Bool {
        guard version == earlier.version + 1, previous == earlier.digest else { return false }
        return (try? accept(after: earlier)) != nil
    }

    /// Checks this list against the last one this device accepted (`previous`): a later
    /// version, signed by one of `previous`'s members. A device that has accepted none yet (it
    /// is joining) takes the first list, signed by its only member, or a list signed by the
    /// member whose answer gave the code the owner compared (`trusting`; ``SyncJoin``).
    ///
    /// - Throws: `errSecDecode` for a list that is not later, not signed by a member, or whose
    ///   signature fails: an older list replayed, or a list written by someone outside the circle.
    public func accept(after previous: SyncDeviceList?, trusting approver: Data? = nil) throws(KeychainError) {
        let refused = { (why: String) in
            KeychainError(.errSecDecode, "the circle's device list on the remote is refused: \(why)")
        }
        let signerKey: Data
        if let previous {
            guard version > previous.version else {
                throw refused("it is version \(version), and this device has accepted version \(previous.version)")
            }
            if let named = self.previous, version == previous.version + 1, named != previous.digest {
                throw refused("it follows another version \(previous.version) than the one this device accepted")
            }
            guard let member = previous.members.first(where: { $0.id == signer }) else {
                throw refused("it is signed by a device that is not in the circle")
            }
            signerKey = member.publicKey
        } else if let approver {
            guard Member(name: "", publicKey: approver).id == signer else {
                throw refused("it is not signed by the device whose code was compared")
            }
            signerKey = approver
        } else {
            guard version == 1, members.count == 1, members[0].id == signer else {
                throw refused("it is not a circle's first list, and no device of the circle vouches for it")
            }
            signerKey = members[0].publicKey
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: signerKey),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(signature, for: body)
        else { throw refused("its signature fails") }
    }
}
