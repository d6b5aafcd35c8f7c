import Crypto
import Foundation
import KeychainProtocol
import Testing

@testable import Enclave

/// The sync record (Docs/Sync.md, "The records"): what the remote stores of an item. It opens
/// only with the circle's key, only as written by its signer, only under its own name; its size
/// says only its bucket; and every byte altered is refused with errSecDecode.
@Suite struct SyncRecordTests {
    static let key = SymmetricKey(size: .bits256)
    static let signer = P256.Signing.PrivateKey()
    static let clock = SyncTimestamp(milliseconds: 1_700_000_000_000, counter: 2, device: Data(repeating: 7, count: 16))
    static let name = Data(repeating: 0xAB, count: 16)

    static func record(
        secret: String = "s3cret", attributes: [String: AttributeValue] = ["acct": .string("me@example.org")]
    )
        throws -> SyncRecord
    {
        try SyncRecord.make(
            .item(
                itemClass: "genp", attributes: AttributeRecordEncoding.encode(attributes),
                secret: SecretBytes(utf8: secret)), epoch: 3, name: name, clock: clock, key: key, signer: signer)
    }

    @Test func theVersionsItsWriterLostTravelSealedWithIt() throws {
        let lost = SyncRecord.Kept(
            clock: SyncTimestamp(milliseconds: 1_699_000_000_000, counter: 0, device: Self.clock.device),
            beatenAt: 1_699_000_000_500, itemClass: "genp",
            attributes: AttributeRecordEncoding.encode(["acct": .string("me")]), secret: SecretBytes(utf8: "the loser"))
        let record = try SyncRecord.make(
            .tombstone, kept: [lost], epoch: 3, name: Self.name, clock: Self.clock, key: Self.key, signer: Self.signer)
        #expect(record.encoded.range(of: Data("the loser".utf8)) == nil)
        let opened = try SyncRecord.decode(record.encoded).open(key: Self.key)
        #expect(opened.kept.count == 1)
        #expect(opened.kept.first?.clock == lost.clock && opened.kept.first?.beatenAt == lost.beatenAt)
        #expect(opened.kept.first?.secret.copyData() == Data("the loser".utf8))

        // Kept versions that would pass the largest bucket are left out, the oldest first.
        let keys = try SyncCircleKeys(raw: P256.Signing.PrivateKey().rawRepresentation)
        keys.startEpoch(1)
        let big = Data(repeating: 1, count: 1600 << 10)
        let versions = (0..<4).map { index in
            SyncRecord.Kept(
                clock: SyncTimestamp(milliseconds: 1_000 + UInt64(index), counter: 0, device: keys.deviceID),
                beatenAt: 2_000, itemClass: "genp", attributes: big, secret: SecretBytes(utf8: "v\(index)"))
        }
        let clock = SyncTimestamp(milliseconds: 3_000, counter: 0, device: keys.deviceID)
        let sealed = try keys.seal(.tombstone, kept: versions, name: Self.name, clock: clock, epoch: 1)
        let carried = try keys.open(sealed, name: Self.name, writer: keys.publicKey).kept
        #expect(carried.map { $0.clock.milliseconds } == [1_003, 1_002], "the two latest fit 4 MiB")
    }

    @Test func aRecordOpensAsWrittenAndSaysNothingInTheClear() throws {
        let record = try Self.record()
        let read = try SyncRecord.decode(record.encoded)
        try read.verify(signer: Self.signer.publicKey)
        guard case .item(let itemClass, let attributes, let secret) = try read.open(key: Self.key).content else {
            Issue.record("not an item")
            return
        }
        #expect(itemClass == "genp" && secret.copyData() == Data("s3cret".utf8))
        #expect(try AttributeRecordEncoding.decode(attributes) == ["acct": .string("me@example.org")])
        #expect(
            read.epoch == 3 && read.name == Self.name && read.clock == Self.clock && read.writer == Self.clock.device)
        // Each at least four bytes: two ("me", as it was) turned up by chance in a random
        // ciphertext about once in 300 runs.
        for clear in ["s3cret", "acct", "me@example.org", "genp"] {
            #expect(record.encoded.range(of: Data(clear.utf8)) == nil, "\(clear) is in the clear")
        }
        let tombstone = try SyncRecord.make(
            .tombstone, epoch: 3, name: Self.name, clock: Self.clock, key: Self.key, signer: Self.signer)
        guard case .tombstone = try SyncRecord.decode(tombstone.encoded).open(key: Self.key).content else {
            Issue.record("not a tombstone")
            return
        }
    }

    @Test func sizesSayOnlyTheBucket() throws {
        let small = try Self.record(secret: "a").encoded.count
        let larger = try Self.record(secret: String(repeating: "a", count: 400)).encoded.count
        let tombstone = try SyncRecord.make(
            .tombstone, epoch: 3, name: Self.name, clock: Self.clock, key: Self.key, signer: Self.signer
        ).encoded.count
        #expect(small == larger && small == tombstone)
        #expect(small == SyncRecord.headerSize + 4 + 512 + SyncRecord.signatureSize)
        let next = try Self.record(secret: String(repeating: "a", count: 600)).encoded.count
        #expect(next == SyncRecord.headerSize + 4 + 2048 + SyncRecord.signatureSize)
        // An item at the keychain's limits still fits the largest bucket.
        var many: [String: AttributeValue] = [:]
        let perAttribute = KeychainLimits.maximumAttributesTotal / KeychainLimits.maximumAttributeCount - 16
        for index in 0..<KeychainLimits.maximumAttributeCount {
            many["attribute\(index)"] = .data(Data(repeating: 1, count: perAttribute))
        }
        #expect(
            try Self.record(secret: String(repeating: "a", count: KeychainLimits.maximumSecretSize), attributes: many)
                .encoded.count == SyncRecord.headerSize + 4 + (4 << 20) + SyncRecord.signatureSize)
    }

    @Test func everyAlteredByteAnotherSignerOrAnotherKeyIsRefused() throws {
        let bytes = try Self.record().encoded
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(throws: KeychainError.errSecDecode, "byte \(index) flipped") {
                let record = try SyncRecord.decode(altered)
                try record.verify(signer: Self.signer.publicKey)
                _ = try record.open(key: Self.key)
            }
        }
        let record = try SyncRecord.decode(bytes)
        #expect(throws: KeychainError.errSecDecode) { try record.verify(signer: P256.Signing.PrivateKey().publicKey) }
        #expect(throws: KeychainError.errSecDecode) { _ = try record.open(key: SymmetricKey(size: .bits256)) }
        // The sealed content under another record's name does not open, whoever signed it: the
        // name is bound to it.
        var moved = record
        moved.name = Data(repeating: 0xCD, count: 16)
        #expect(throws: KeychainError.errSecDecode) { _ = try moved.open(key: Self.key) }
    }
}
