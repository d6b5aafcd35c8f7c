import CDBus
import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport
import Testing

@testable import Enclave
@testable import KeychainSync
@testable import SecretService

/// Every decoder of outside bytes, fuzzed (issue 52, "Decoders are total"): the wire messages, a
/// backup's header, records and whole file, a sync record, head, device list, join request and answer,
/// key wrap and the sync state, git's listing and reading of a remote, a D-Bus call's arguments as the
/// Secret Service bridge reads them (libdbus takes the message apart, and checks it, first), the object
/// paths it names, and a process's `/proc/PID/stat`, whose command name the process chooses.
/// Each starts from a corpus of real encodings, made by the code that writes them, and takes
/// mutated copies of it — bits flipped,
/// bytes set to boundary values, lengths and counts made huge, ranges cut, repeated or spliced
/// from another seed. A decoder may refuse an input, never trap, hang or allocate without bound:
/// a trap ends the test process, which fails the run.
///
/// The mutations come from a fixed seed, so a run repeats exactly; `KEYCHAIN_FUZZ_SEED` picks
/// another and `KEYCHAIN_FUZZ_ROUNDS` another count (a longer local run: 1,000,000). The wire
/// decoders also have a libFuzzer target (`wire-fuzzer`, Docs/WireProtocol.md).
@Suite struct DecoderFuzzTests {
    /// A decoder under test, its corpus, and how many mutated inputs it takes in a run (the
    /// ones that agree a key or check a signature on each input take fewer).
    struct Target: Sendable, CustomTestStringConvertible {
        let name: String
        let rounds: Int
        let seeds: @Sendable () throws -> [[UInt8]]
        let decode: @Sendable ([UInt8]) -> Void
        var testDescription: String { name }
    }

    static let rounds = ProcessInfo.processInfo.environment["KEYCHAIN_FUZZ_ROUNDS"].flatMap(Int.init) ?? 200_000
    static let seed = ProcessInfo.processInfo.environment["KEYCHAIN_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED_52

    // MARK: The corpus

    static let signer = P256.Signing.PrivateKey()
    static let device = SyncTimestamp(milliseconds: 1_700_000_000_000, counter: 1, device: Data(repeating: 7, count: 16))
    static let recordKey = SymmetricKey(size: .bits256)
    static let backupKDF = BackupFile.newKDF()
    static let backupKeys = Result { try BackupKeys(password: SecretBytes(utf8: "fuzz"), kdf: backupKDF) }
    static let agreement = Result { try P256.KeyAgreement.PrivateKey(rawRepresentation: signer.rawRepresentation) }

    static func item(_ account: String) -> BackupRecord {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        return .item(
            BackupItem(
                itemClass: ItemClass.genericPassword.rawValue,
                attributes: AttributeRecordEncoding.encode([
                    "acct": .string(account), "svce": .string("fuzz"), "agrp": .string("com.example.app"),
                    "pdmn": .string(Accessibility.whenUnlocked.rawValue), "cdat": .date(date), "mdat": .date(date),
                ]),
                secret: SecretBytes(utf8: "secret of \(account)"), accessControl: nil))
    }

    static func backupFile() throws -> [UInt8] {
        let keys = try backupKeys.get()
        var writer = BackupWriter(keys: keys, header: BackupHeader(kdf: backupKDF))
        var file = writer.header
        for index in 0..<3 { file.append(try writer.append(item("a\(index)"))) }
        file.append(try writer.finish())
        return Array(file)
    }

    static func list() throws -> SyncDeviceList {
        let first = try SyncDeviceList.first(name: "laptop", identity: signer)
        let other = P256.Signing.PrivateKey()
        return try first.next(
            members: first.members + [SyncDeviceList.Member(name: "desktop", publicKey: other.publicKey.x963Representation)],
            epoch: 2, signedBy: signer)
    }

    static func state() throws -> SyncState {
        var state = SyncState(
            remote: "git@example.com:me/circle.git", deviceName: "laptop", identity: Data(repeating: 1, count: 40),
            list: try list().encoded)
        state.wrappedKeys[1] = Data(repeating: 2, count: 125)
        state.sequence = 7
        state.clock = device.encoded
        state.heads = ["00ff": 3]
        state.items = ["ab": SyncState.Item(row: Data(repeating: 3, count: 16), clock: device.encoded)]
        state.published = ["ab": device.encoded]
        state.lastSync = Date(timeIntervalSince1970: 1_700_000_000)
        state.lastRefused = ["a refusal"]
        state.wentBack = "3 records published again"
        state.joinNonce = Data(repeating: 4, count: 32)
        state.fixedAnswer = Data(repeating: 5, count: 210)
        state.openAnswer = Data(repeating: 6, count: 210)
        state.earlierLists = [try SyncDeviceList.first(name: "laptop", identity: signer).encoded]
        state.fork = "the circle's history forked"
        return state
    }

    static let objectA = String(repeating: "a", count: 40)
    static let objectB = String(repeating: "b", count: 40)

    static let targets: [Target] = [
        Target(name: "wire request and reply", rounds: rounds) {
            let context = AuthenticationContextID.random()
            let item = NewItem(
                itemClass: .genericPassword, attributes: ["svce": .string("s"), "cdat": .date(Date())],
                secret: SecretBytes(utf8: "x"))
            let query = ItemQuery(itemClass: .genericPassword, attributes: ["svce": .string("s")], returns: [.data])
            return [
                RequestCoder.encode(.add(item)), RequestCoder.encode(.copyMatching(query)),
                RequestCoder.encode(.unlockByBiometry(timeout: 5)),
                RequestCoder.encode(.verifyPasscode(SecretBytes(utf8: "1234"), context: context)),
                RequestCoder.encode(.sync(.setUp(remote: "git@h:c.git", deviceName: "laptop"))),
                ReplyCoder.encode(.success(.count(3))), ReplyCoder.encode(.failure(KeychainError.errSecDecode)),
                ReplyCoder.encode(.success(.actingFor(app: "untrusted:/usr/bin/secret-tool"))),
            ]
        } decode: { bytes in
            _ = try? RequestCoder.decode(bytes)
            _ = try? ReplyCoder.decode(bytes)
        },
        Target(name: "backup header", rounds: rounds) {
            [Array(try backupFile().prefix(BackupFile.headerSize))]
        } decode: { bytes in
            _ = try? BackupHeader.parse(Data(bytes))
        },
        Target(name: "backup record", rounds: rounds) {
            [
                item("a").encoded(), BackupRecord.end(count: 3).encoded(),
                BackupRecord.sealedToDevice(Data(repeating: 5, count: 80)).encoded(),
            ]
        } decode: { bytes in
            _ = try? BackupRecord.decode(bytes)
        },
        Target(name: "backup file", rounds: rounds / 4) {
            [try backupFile()]
        } decode: { bytes in
            guard let keys = try? backupKeys.get() else { return }
            var reader = BackupReader(keys: keys)
            _ = try? reader.read(SecretBytes(bytes))
            _ = try? reader.finish()
        },
        Target(name: "sync record", rounds: rounds / 4) {
            let content = SyncRecord.Content.item(
                itemClass: "genp", attributes: AttributeRecordEncoding.encode(["acct": .string("me")]),
                secret: SecretBytes(utf8: "s3cret"))
            let record = try SyncRecord.make(
                content, epoch: 1, name: Data(repeating: 0xAB, count: 16), clock: device, key: recordKey, signer: signer)
            let tombstone = try SyncRecord.make(
                .tombstone, epoch: 1, name: Data(repeating: 0xAC, count: 16), clock: device, key: recordKey,
                signer: signer)
            return [Array(record.encoded), Array(tombstone.encoded)]
        } decode: { bytes in
            guard let record = try? SyncRecord.decode(Data(bytes)) else { return }
            _ = try? record.open(key: recordKey)
        },
        Target(name: "sync head", rounds: rounds / 10) {
            var head = SyncHead(
                device: Data(repeating: 7, count: 16), sequence: 4,
                digest: SyncHead.digest(of: [(name: Data(repeating: 0xAB, count: 16), clock: device)]), signature: Data())
            head.signature = try signer.signature(for: head.body).rawRepresentation
            return [Array(head.encoded)]
        } decode: { bytes in
            _ = try? SyncHead.decode(Data(bytes), writer: signer.publicKey.x963Representation)
        },
        Target(name: "sync device list", rounds: rounds / 10) {
            [Array(try list().encoded), Array(try SyncDeviceList.first(name: "x", identity: signer).encoded)]
        } decode: { bytes in
            guard let list = try? SyncDeviceList.decode(Data(bytes)) else { return }
            _ = try? list.accept(after: nil)
        },
        Target(name: "sync join request", rounds: rounds) {
            let nonce = Data(repeating: 9, count: SyncJoin.nonceSize)
            let key = signer.publicKey.x963Representation
            var request = SyncJoin.Request(
                name: "desktop", publicKey: key, commitment: SyncJoin.commitment(publicKey: key, nonce: nonce))
            let asked = Array(request.encoded)
            request.nonce = nonce
            return [asked, Array(request.encoded)]
        } decode: { bytes in
            _ = SyncJoin.Request.decode(bytes)
        },
        Target(name: "sync join answer", rounds: rounds / 10) {
            let key = P256.Signing.PrivateKey().publicKey.x963Representation
            let request = SyncJoin.Request(
                name: "desktop", publicKey: key,
                commitment: SyncJoin.commitment(publicKey: key, nonce: Data(repeating: 9, count: 32)))
            return [Array(try SyncJoin.Answer.make(to: request, nonce: SyncJoin.nonce(), identity: signer).encoded)]
        } decode: { bytes in
            _ = SyncJoin.Answer.decode(
                bytes, signedBy: SyncDeviceList.Member(name: "laptop", publicKey: signer.publicKey.x963Representation))
        },
        Target(name: "sync key wrap", rounds: rounds / 20) {
            [Array(try SyncKeyWrap.wrap(recordKey, epoch: 1, to: agreement.get().publicKey))]
        } decode: { bytes in
            guard let identity = try? agreement.get() else { return }
            _ = try? SyncKeyWrap.unwrap(Data(bytes), epoch: 1, with: identity)
        },
        Target(name: "sync state", rounds: rounds) {
            [Array(try state().encoded)]
        } decode: { bytes in
            _ = try? SyncState.decode(Data(bytes))
        },
        Target(name: "git ls-tree", rounds: rounds) {
            [
                Array("100644 blob \(objectA)      12\tcircle/list\0".utf8)
                    + Array("120000 blob \(objectB)       9\tdevices/x\0160000 commit \(objectB)       -\tsub\0".utf8)
            ]
        } decode: { bytes in
            _ = try? GitOutput.treeEntries(bytes, maximumFile: 1 << 20, maximumTotal: 1 << 24)
        },
        Target(name: "git cat-file --batch", rounds: rounds) {
            [Array("\(objectA) blob 3\nabc\n\(objectB) blob 0\n\n".utf8)]
        } decode: { bytes in
            let entries = [
                GitOutput.Entry(path: "a", object: objectA, size: 3), GitOutput.Entry(path: "b", object: objectB, size: 0),
            ]
            _ = try? GitOutput.blobs(bytes, for: entries)
        },
    ]

    /// The bytes of a D-Bus call to the Secret Service carrying `arguments`, as libdbus marshals it.
    static func marshalled(_ member: String, _ arguments: [DBusValue]) -> [UInt8] {
        guard
            let message = DBusMessage.methodCall(
                destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets",
                interface: "org.freedesktop.Secret.Service", member: member, arguments)
        else { return [] }
        dbus_message_set_serial(message.pointer, 1)
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message.pointer, &buffer, &length) != 0, let buffer else { return [] }
        defer { dbus_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }

    static let dbusTarget = Target(name: "D-Bus call arguments", rounds: rounds / 2) {
        let secret = DBusValue.structure([
            .objectPath("/org/freedesktop/secrets/session/1"), .bytes([1, 2, 3]), .bytes(Array("s3cret".utf8)),
            .string("text/plain"),
        ])
        let properties = DBusValue.dictionary(
            key: "s", value: "v",
            [
                DBusDictionaryEntry(key: .string("org.freedesktop.Secret.Item.Label"), value: .variant(.string("Mail"))),
                DBusDictionaryEntry(
                    key: .string("org.freedesktop.Secret.Item.Attributes"),
                    value: .variant(.stringDictionary(["service": "imap", "user": "me"]))),
            ])
        return [
            marshalled("SearchItems", [.stringDictionary(["service": "imap"])]),
            marshalled("OpenSession", [.string("plain"), .variant(.string(""))]),
            marshalled("CreateItem", [properties, secret, .boolean(true)]),
            marshalled("GetSecrets", [.objectPaths(["/org/freedesktop/secrets/collection/login/1"]), .objectPath("/")]),
            marshalled("Unlock", [.array(element: "o", []), .uint32(7), .uint64(9), .int32(-1), .byte(2)]),
        ]
    } decode: { bytes in
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let pointer = bytes.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32(buffer.count), &error) }
        })
        else { return }
        let message = DBusMessage(taking: pointer)
        for value in message.arguments() ?? [] { value.unixFDs.forEach { close($0) } }
    }

    /// A process's `/proc/PID/stat` as keychaind and the bridge read it: the command name in it
    /// is the process's to choose (a `)`, spaces, digits, bytes that are not UTF-8).
    /// (A quarter of the rounds: each input is read for 24 fields.)
    static let processStatTarget = Target(name: "a process's stat", rounds: rounds / 4) {
        [
            Array("4242 (evil) 1 2 ) S 1 4242 777 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 123456 1000\n".utf8),
            Array("1 (x) S 0 1 1 34816 -1 4194560 9223372036854775807 99999999999999999999 --1\n".utf8),
        ]
    } decode: { bytes in
        for index in 0..<24 { _ = ProcessFiles.statNumber(index, of: bytes) }
    }

    /// An object path a D-Bus client names (libdbus checks a path's syntax; the bridge reads
    /// what it names).
    static let objectPathTarget = Target(name: "a Secret Service object path", rounds: rounds) {
        [
            "/org/freedesktop/secrets", "/org/freedesktop/secrets/collection/login/abc_123",
            "/org/freedesktop/secrets/aliases/default", "/org/freedesktop/secrets/session/s1",
        ].map { Array($0.utf8) }
    } decode: { bytes in
        _ = SecretObjectPath(String(decoding: bytes, as: UTF8.self))
    }

    @Test(arguments: targets + [dbusTarget, processStatTarget, objectPathTarget])
    func mutatedInputsAreRefusedOrDecodedNeverATrap(target: Target) throws {
        let seeds = try target.seeds()
        #expect(!seeds.isEmpty)
        var random = Mutator.Random(seed: Self.seed &+ UInt64(target.name.utf8.count))
        for seed in seeds { target.decode(seed) }
        let started = Date()
        for round in 0..<target.rounds {
            let input = Mutator.mutate(seeds[round % seeds.count], splicing: seeds, &random)
            target.decode(input)
        }
        let seconds = Date().timeIntervalSince(started)
        print("fuzz \(target.name): \(target.rounds) inputs in \(String(format: "%.1f", seconds)) s")
    }

    /// A mutated input is still taken apart as git's output would be by the transport: a listing
    /// that names a file larger than allowed, or too many bytes in all, is errSecDecode.
    @Test func gitOutputBoundsSizes() {
        let large = Array("100644 blob \(Self.objectA) 2000000\tcircle/list\0".utf8)
        #expect(throws: KeychainError.errSecDecode) {
            _ = try GitOutput.treeEntries(large, maximumFile: 1 << 20, maximumTotal: 1 << 24)
        }
        let listing = Array("100644 blob \(Self.objectA)      12\tcircle/list\0".utf8)
        #expect(throws: KeychainError.errSecDecode) {
            _ = try GitOutput.treeEntries(listing + listing, maximumFile: 1 << 20, maximumTotal: 20)
        }
        let cut = Array("\(Self.objectA) blob 3\nab".utf8)
        #expect(throws: KeychainError.errSecDecode) {
            _ = try GitOutput.blobs(cut, for: [GitOutput.Entry(path: "a", object: Self.objectA, size: 3)])
        }
    }
}

/// The mutations of ``DecoderFuzzTests``.
enum Mutator {
    /// xorshift64*: a fixed sequence for a fixed seed.
    struct Random {
        var state: UInt64
        init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(next() % UInt64(bound)) }
    }

    /// Values that find the edges of lengths, counts and numbers.
    static let boundaries: [UInt64] = [
        0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x1_0000_0000,
        0x7FFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000, 0xFFF8_0000_0000_0000,
        0x7FEF_FFFF_FFFF_FFFF, 0x4E3B_2A00_0000_0000,
    ]

    static func mutate(_ seed: [UInt8], splicing others: [[UInt8]], _ random: inout Random) -> [UInt8] {
        var bytes = seed
        for _ in 0..<(1 + random.below(4)) {
            let at = random.below(bytes.count + 1)
            switch random.below(8) {
            case 0 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] ^= UInt8(1 << random.below(8))
            case 1 where !bytes.isEmpty:
                bytes[min(at, bytes.count - 1)] = UInt8(truncatingIfNeeded: random.next())
            case 2:
                let value = boundaries[random.below(boundaries.count)]
                let width = [1, 2, 4, 8][random.below(4)]
                let big = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) }
                let end = min(bytes.count, at + width)
                bytes.replaceSubrange(at..<end, with: big)
            case 3:
                bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(16)))
            case 4:
                bytes = Array(bytes.prefix(at))
            case 5:
                let end = min(bytes.count, at + 1 + random.below(32))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            case 6:
                let other = others[random.below(others.count)]
                let from = random.below(other.count + 1)
                bytes = Array(bytes.prefix(at)) + other[from...]
            default:
                bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
            }
        }
        return bytes
    }
}
