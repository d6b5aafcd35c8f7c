import Crypto
import Foundation
import KeychainProtocol
import Testing

@testable import Enclave

/// The circle of devices (Docs/Sync.md): its signed list takes only later versions signed by a
/// member, so that the remote alone adds nobody and brings back nobody removed; and the sync
/// key, wrapped to each member, opens only with that member's identity key, for that epoch.
@Suite struct SyncCircleTests {
    /// A device's identity key, for signing and for key agreement (one P-256 key, as an Enclave
    /// key serves both).
    struct Device {
        let name: String
        let signing = P256.Signing.PrivateKey()
        var agreement: P256.KeyAgreement.PrivateKey {
            get throws { try P256.KeyAgreement.PrivateKey(rawRepresentation: signing.rawRepresentation) }
        }
        var member: SyncDeviceList.Member {
            SyncDeviceList.Member(name: name, publicKey: signing.publicKey.x963Representation)
        }
    }

    @Test func theListTakesOnlyLaterVersionsSignedByAMember() throws {
        let (laptop, desktop, server, intruder) =
            (Device(name: "laptop"), Device(name: "desktop"), Device(name: "server"), Device(name: "intruder"))
        let first = try SyncDeviceList.first(name: "laptop", identity: laptop.signing)
        try SyncDeviceList.decode(first.encoded).accept(after: nil)

        // The desktop joins, approved by the laptop; it takes the list on the laptop's word,
        // whose answer gave the code the owner compared.
        let second = try first.next(members: [laptop.member, desktop.member], epoch: 1, signedBy: laptop.signing)
        let read = try SyncDeviceList.decode(second.encoded)
        try read.accept(after: first)
        try read.accept(after: nil, trusting: laptop.member.publicKey)
        #expect(read == second && read.members.count == 2)

        // The server added by the desktop, then the laptop removed (a new epoch).
        let third = try second.next(
            members: [laptop.member, desktop.member, server.member], epoch: 1, signedBy: desktop.signing)
        try third.accept(after: second)
        let fourth = try third.next(members: [desktop.member, server.member], epoch: 2, signedBy: server.signing)
        try fourth.accept(after: third)

        let refusals: [(String, () throws -> Void)] = [
            ("an older list replayed", { try second.accept(after: fourth) }),
            ("the same version again", { try fourth.accept(after: fourth) }),
            (
                "a list an intruder made and signed, as version 5",
                {
                    var forged = try SyncDeviceList.first(name: "intruder", identity: intruder.signing)
                    while forged.version < 5 {
                        forged = try forged.next(
                            members: [desktop.member, server.member, intruder.member], epoch: 2,
                            signedBy: intruder.signing)
                    }
                    try forged.accept(after: fourth)
                }
            ),
            (
                "the removed laptop adding itself back, as version 5",
                {
                    var back = third
                    while back.version < 5 {
                        back = try back.next(
                            members: [laptop.member, desktop.member, server.member], epoch: 2,
                            signedBy: laptop.signing)
                    }
                    try back.accept(after: fourth)
                }
            ),
            (
                "a list for a joining device, signed by another than the one it compared",
                {
                    try second.accept(after: nil, trusting: server.member.publicKey)
                }
            ),
            ("a list that is not a first one, with nobody vouching", { try second.accept(after: nil) }),
        ]
        for (name, refusal) in refusals {
            #expect(throws: KeychainError.errSecDecode, "\(name)") { try refusal() }
        }
        // Every byte of a list flipped is refused.
        let bytes = second.encoded
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(throws: KeychainError.errSecDecode, "byte \(index) flipped") {
                try SyncDeviceList.decode(altered).accept(after: first)
            }
        }
    }

    /// Issue 57: two lists signed by members of one version were both valid to whoever saw one
    /// first. Each list names the digest of the one it follows: a list that follows another
    /// version N is refused as version N+1, and two different lists following one version are a
    /// fork (``SyncDeviceList/follows(_:)``).
    @Test func eachListNamesTheOneItFollows() throws {
        let (laptop, phone, desktop) = (Device(name: "laptop"), Device(name: "phone"), Device(name: "desktop"))
        let first = try SyncDeviceList.first(name: "laptop", identity: laptop.signing)
        #expect(first.previous == Data(count: 32))
        let shared = try first.next(
            members: [laptop.member, phone.member, desktop.member], epoch: 1, signedBy: laptop.signing)
        #expect(shared.previous == first.digest && shared.follows(first))
        // The laptop removes the phone; on a history that never shows it, the phone removes the
        // laptop. Both follow the shared version: a fork.
        let laptops = try shared.next(members: [laptop.member, desktop.member], epoch: 2, signedBy: laptop.signing)
        let phones = try shared.next(members: [phone.member, desktop.member], epoch: 2, signedBy: phone.signing)
        #expect(laptops.follows(shared) && phones.follows(shared) && laptops != phones)
        // What follows the laptop's version is refused after the phone's, and the other way.
        let onLaptops = try laptops.next(members: laptops.members, epoch: 2, signedBy: desktop.signing)
        #expect(throws: KeychainError.errSecDecode) { try onLaptops.accept(after: phones) }
        #expect(!onLaptops.follows(phones) && onLaptops.follows(laptops))
        // A list of the first format (no digest) is read, and a list follows it.
        var writer = [UInt8]()
        func append(_ bytes: some Collection<UInt8>) {
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { writer += $0 }
            writer += bytes
        }
        append(Array("swift-keychain device list v1".utf8))
        withUnsafeBytes(of: UInt64(1).bigEndian) { writer += $0 }
        withUnsafeBytes(of: UInt32(1).bigEndian) { writer += $0 }
        withUnsafeBytes(of: UInt32(1).bigEndian) { writer += $0 }
        append(laptop.member.id)
        append(Array("laptop".utf8))
        append(laptop.member.publicKey)
        append(laptop.member.id)
        let signature = try laptop.signing.signature(for: Data(writer)).rawRepresentation
        let old = try SyncDeviceList.decode(Data(writer) + signature)
        #expect(old.previous == nil && old.encoded == Data(writer) + signature)
        try old.accept(after: nil)
        let upgraded = try old.next(members: [laptop.member, phone.member], epoch: 1, signedBy: laptop.signing)
        try upgraded.accept(after: old)
        #expect(upgraded.follows(old))
    }

    @Test func theSyncKeyOpensOnlyForItsMemberAndEpoch() throws {
        let (laptop, desktop) = (Device(name: "laptop"), Device(name: "desktop"))
        let key = SymmetricKey(size: .bits256)
        let (laptopKey, desktopKey) = (try laptop.agreement, try desktop.agreement)
        let wrapped = try SyncKeyWrap.wrap(key, epoch: 4, to: laptopKey.publicKey)
        let unwrapped = try SyncKeyWrap.unwrap(wrapped, epoch: 4, with: laptopKey)
        #expect(unwrapped.withUnsafeBytes { Data($0) } == key.withUnsafeBytes { Data($0) })
        #expect(SyncKeyWrap.deviceID(laptopKey.publicKey) == laptop.member.id)
        #expect(throws: KeychainError.errSecDecode) { _ = try SyncKeyWrap.unwrap(wrapped, epoch: 4, with: desktopKey) }
        #expect(throws: KeychainError.errSecDecode) { _ = try SyncKeyWrap.unwrap(wrapped, epoch: 5, with: laptopKey) }
        for index in wrapped.indices {
            var altered = wrapped
            altered[index] ^= 0x01
            #expect(throws: KeychainError.errSecDecode, "byte \(index) flipped") {
                _ = try SyncKeyWrap.unwrap(altered, epoch: 4, with: laptopKey)
            }
        }
    }
}
