import Foundation
import KeychainProtocol
import Testing

@testable import Enclave

/// The backup file's format (Docs/Backup.md) against every alteration and cut: each byte
/// flipped, each length cut, chunks moved, dropped or repeated, is refused; and a backup of
/// 100,000 items, whose time and size the log reports.
@Suite struct BackupFormatTests {
    static let password = SecretBytes(utf8: "a backup password")

    static func item(_ index: Int, secretSize: Int = 12) -> BackupRecord {
        let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(index))
        let attributes: [String: AttributeValue] = [
            "acct": .string("account \(index)"), "svce": .string("bulk"), "agrp": .string("com.example.app"),
            "pdmn": .string(Accessibility.whenUnlocked.rawValue), "sync": .bool(false), "cdat": .date(date),
            "mdat": .date(date),
        ]
        return .item(
            BackupItem(
                itemClass: ItemClass.genericPassword.rawValue, attributes: AttributeRecordEncoding.encode(attributes),
                secret: SecretBytes(Array(repeating: UInt8(index % 251), count: secretSize)), accessControl: nil))
    }

    /// A file of `records`, and its keys.
    static func file(_ records: [BackupRecord]) throws -> (Data, BackupKeys) {
        let kdf = BackupFile.newKDF()
        let keys = try BackupKeys(password: password, kdf: kdf)
        var writer = BackupWriter(keys: keys, header: BackupHeader(kdf: kdf))
        var file = writer.header
        for record in records { file.append(try writer.append(record)) }
        file.append(try writer.finish())
        return (file, keys)
    }

    /// The records of `bytes`, read whole.
    static func read(_ bytes: Data, _ keys: BackupKeys) throws(KeychainError) -> Int {
        var reader = BackupReader(keys: keys)
        let records = try reader.read(SecretBytes(bytes))
        let count = try reader.finish()
        guard count == UInt64(records.count) else { throw KeychainError.errSecInternalComponent }
        return records.count
    }

    @Test func everyFlippedByteAndEveryCutIsRefused() throws {
        let (file, keys) = try Self.file((0..<3).map { Self.item($0) })
        #expect(try Self.read(file, keys) == 3)
        for index in file.indices {
            var altered = file
            altered[index] ^= 0x01
            // The magic, the version, N, r and p, flipped, are refused before the HMAC is checked
            // (only the writer's parameters are taken); the HMAC refuses a flipped salt or HMAC.
            // After the header, every byte is a chunk's.
            let expected: KeychainError =
                (15..<BackupFile.headerSize).contains(index) ? .errSecAuthFailed : .errSecDecode
            #expect(throws: expected, "byte \(index) flipped") {
                _ = try Self.read(altered, keys)
            }
        }
        for length in 0..<file.count {
            #expect(throws: KeychainError.errSecDecode, "cut at \(length)") {
                _ = try Self.read(file.prefix(length), keys)
            }
        }
        #expect(throws: KeychainError.errSecDecode) { _ = try Self.read(file + Data([0]), keys) }
    }

    @Test func chunksMovedDroppedOrRepeatedAreRefused() throws {
        // Six 16 KiB secrets: three chunks of 64 KiB at most.
        let (file, keys) = try Self.file((0..<6).map { Self.item($0, secretSize: 16 << 10) })
        #expect(try Self.read(file, keys) == 6)
        var chunks: [Data] = []
        var offset = BackupFile.headerSize
        while offset < file.count {
            let length = file[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            chunks.append(file[offset..<(offset + 4 + length)])
            offset += 4 + length
        }
        #expect(chunks.count == 2)
        let header = file.prefix(BackupFile.headerSize)
        let (other, _) = try Self.file((0..<6).map { Self.item($0, secretSize: 16 << 10) })
        for (name, order) in [
            ("swapped", [chunks[1], chunks[0]]), ("first dropped", [chunks[1]]), ("last dropped", [chunks[0]]),
            ("first repeated", [chunks[0], chunks[0], chunks[1]]),
            ("last repeated", [chunks[0], chunks[1], chunks[1]]),
            ("a chunk of another backup", [other.dropFirst(BackupFile.headerSize).prefix(chunks[0].count), chunks[1]]),
        ] {
            #expect(throws: KeychainError.errSecDecode, "\(name)") {
                _ = try Self.read(order.reduce(header, +), keys)
            }
        }
    }

    /// Issue 52, attack 3: a 63-byte header asking for scrypt N = 2^20 (1 GiB) with a MAC that
    /// is garbage had keychaind derive the key before checking anything; four such restores at
    /// once took it to 4.1 GiB. Parameters other than the writer's are refused first, at once.
    @Test func aHeaderAskingForMoreWorkThanTheWriterUsesIsRefusedBeforeAnyDerivation() throws {
        let (file, _) = try Self.file([Self.item(0)])
        for (offset, value) in [(9, UInt8(20)), (9, 24), (13, 16), (14, 4)] {
            var hostile = Data(file.prefix(BackupFile.headerSize))
            hostile[offset] = value
            let keychain = try TestKeychain.make()
            defer { keychain.remove() }
            let started = Date()
            #expect(throws: KeychainError.errSecDecode, "byte \(offset) = \(value)") {
                _ = try SecItemAPITests.BackupTests.restore(hostile, into: keychain, password: "a backup password")
            }
            #expect(Date().timeIntervalSince(started) < 0.3, "byte \(offset) = \(value): a derivation ran")
        }
    }

    /// Restores run one at a time in a keychain: another connection's is refused until the
    /// first ends, finished or failed.
    @Test func aSecondRestoreWaitsForTheFirstToEnd() throws {
        let (file, _) = try Self.file([Self.item(0)])
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let password = SecretBytes(utf8: "a backup password")
        _ = try keychain.perform(.beginRestore(password: password, replacing: false), owner: true, connection: 1)
        #expect(throws: KeychainError.errSecBadReq) {
            _ = try keychain.perform(.beginRestore(password: password, replacing: false), owner: true, connection: 2)
        }
        _ = try keychain.perform(.restoreChunk(SecretBytes(file)), owner: true, connection: 1)
        _ = try keychain.perform(.finishRestore, owner: true, connection: 1)
        _ = try keychain.perform(.beginRestore(password: password, replacing: false), owner: true, connection: 2)
        // A restore that fails ends too.
        #expect(throws: KeychainError.self) {
            _ = try keychain.perform(.restoreChunk(SecretBytes(Data(repeating: 0, count: 100))), owner: true, connection: 2)
        }
        _ = try keychain.perform(.beginRestore(password: password, replacing: false), owner: true, connection: 3)
    }

    /// Issue 52, attack 2, at its source: an item dated 10^300 seconds on, in a file made under
    /// the right password, is refused by the restore (it was restored, and trapped the next sync).
    @Test func anItemDatedBeyondTheYear9999IsRefused() throws {
        let hostile = Date(timeIntervalSince1970: 1e300)
        let attributes: [String: AttributeValue] = [
            "acct": .string("dated"), "svce": .string("bulk"), "agrp": .string("com.example.app"),
            "pdmn": .string(Accessibility.whenUnlocked.rawValue), "sync": .bool(true), "cdat": .date(hostile),
            "mdat": .date(hostile),
        ]
        let dated = BackupRecord.item(
            BackupItem(
                itemClass: ItemClass.genericPassword.rawValue, attributes: AttributeRecordEncoding.encode(attributes),
                secret: SecretBytes(utf8: "s"), accessControl: nil))
        let (file, _) = try Self.file([Self.item(0), dated])
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        #expect(throws: KeychainError.errSecDecode) {
            _ = try SecItemAPITests.BackupTests.restore(file, into: keychain, password: "a backup password")
        }
    }

    /// A file made by hand, under the right password, with items no backup holds in the clear:
    /// each is refused with errSecDecode, and nothing of the file is restored.
    @Test(arguments: [
        ("a token's item", ["tkid": AttributeValue.string("com.apple.setoken")], Accessibility.whenUnlocked),
        ("a WhenPasscodeSetThisDeviceOnly item", [:], .whenPasscodeSetThisDeviceOnly),
        ("a ThisDeviceOnly item in the clear", [:], .afterFirstUnlockThisDeviceOnly),
    ])
    func itemsThatNeverLeaveTheirDeviceAreRefusedFromAMadeUpFile(
        name: String, extra: [String: AttributeValue], accessibility: Accessibility
    ) throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        var attributes: [String: AttributeValue] = [
            "agrp": .string("com.example.app"), "pdmn": .string(accessibility.rawValue), "sync": .bool(false),
            "cdat": .date(date), "mdat": .date(date),
        ]
        attributes.merge(extra) { $1 }
        let itemClass: ItemClass = extra["tkid"] != nil ? .key : .genericPassword
        if itemClass == .genericPassword { attributes["acct"] = .string("made up") }
        let madeUp = BackupRecord.item(
            BackupItem(
                itemClass: itemClass.rawValue, attributes: AttributeRecordEncoding.encode(attributes),
                secret: SecretBytes(utf8: "s"), accessControl: nil))
        let (file, _) = try Self.file([Self.item(0), madeUp])
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        #expect(throws: KeychainError.errSecDecode, "\(name)") {
            _ = try SecItemAPITests.BackupTests.restore(file, into: keychain, password: "a backup password")
        }
        guard case .count(let count) = try keychain.perform(.countItems(accessibility: nil)) else {
            throw KeychainError.errSecInternalComponent
        }
        #expect(count == 0, "\(name) restored something")
    }

    @Test func aHundredThousandItemsAreBackedUpAndRestored() throws {
        let count = 100_000
        let (file, _) = try Self.file((0..<count).map { Self.item($0) })
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let clock = ContinuousClock()
        var report: RestoreReport?
        let restoring = try clock.measure {
            report = try SecItemAPITests.BackupTests.restore(
                file, into: keychain, password: "a backup password", partSize: 512 << 10)
        }
        #expect(report == RestoreReport(added: count, replaced: 0, kept: 0, fromAnotherDevice: 0))
        var backup = Data()
        var summary: BackupSummary?
        let backingUp = try clock.measure {
            (backup, summary) = try SecItemAPITests.BackupTests.backup(keychain, password: "a backup password")
        }
        #expect(summary == BackupSummary(migratable: count, thisDeviceOnly: 0, leftOut: 0))
        print(
            "100,000 items: backup \(backingUp), \(backup.count) bytes (\(backup.count / count) a item); restore "
                + "\(restoring) into an empty keychain")
    }
}
