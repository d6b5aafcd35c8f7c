import Foundation
import KeychainProtocol
import Testing

/// The daemon's wire format: every request and reply survives the trip, and bytes that are not
/// a valid message are refused with a reason, never trusted, never a crash (issue: "a
/// versioned, length-prefixed binary protocol with a hard size limit, decoded in one place").
@Suite struct WireFormatTests {
    static let context = AuthenticationContextID.random()

    static var everyRequest: [KeychainRequest] {
        var item = NewItem(
            itemClass: .genericPassword,
            attributes: [
                "acct": .string("alice"), "svce": .string("Café"), "gena": .data(Data([0, 1])), "crtr": .number(-7),
                "invi": .bool(true), "cdat": .date(Date(timeIntervalSinceReferenceDate: 12.5)),
            ],
            accessGroup: "com.example.app", accessibility: .whenUnlockedThisDeviceOnly, synchronizable: true,
            secret: SecretBytes(utf8: "hunter2"), returns: [.data, .attributes])
        item.accessControl = try? AccessControl(
            protection: .whenPasscodeSetThisDeviceOnly, flags: [.biometryAny, .or, .devicePasscode])
        item.applicationPassword = SecretBytes(utf8: "app")
        item.keptDates = KeptDates(
            created: Date(timeIntervalSince1970: 1_600_000_000), modified: Date(timeIntervalSince1970: 1_700_000_000.5))
        var query = ItemQuery(
            itemClass: .internetPassword, attributes: ["srvr": .string("example.com")], accessGroup: "g",
            accessibility: .afterFirstUnlock,
            synchronizable: .any, persistentRef: Data([9, 9]), limit: .count(3), returns: .persistentRef)
        query.authenticationContext = context
        query.skipsItemsNeedingAuthentication = true
        query.matchesCaseInsensitively = true
        query.itemList = [Data([1, 2]), Data()]
        let passcode = SecretBytes(utf8: "1234")
        return [
            .add(item), .copyMatching(query), .copyMatching(ItemQuery(itemClass: .key, limit: .all)),
            .update(
                query,
                ItemChanges(
                    attributes: ["labl": .string("x")], accessGroup: "h", accessibility: .always, synchronizable: false,
                    secret: passcode)),
            .delete(query), .deviceStatus, .lock, .unlock(passcode: passcode),
            .setPasscode(current: nil, new: passcode),
            .setPasscode(current: passcode, new: passcode), .removePasscode(current: passcode), .erase(passcode: nil),
            .erase(passcode: passcode),
            .countItems(accessibility: nil), .countItems(accessibility: .whenPasscodeSetThisDeviceOnly),
            .setEraseAfterFailedAttempts(true, passcode: passcode),
            .verifyPasscode(passcode, context: context), .biometryStatus,
            .awaitBiometricMatch(timeout: 0.1, context: context), .endBiometricMatch,
            .invalidateContext(context), .enrollFinger(name: "thumb", passcode: passcode),
            .removeFinger(name: "thumb", passcode: passcode),
            .setSimulatedSensor(false, passcode: passcode), .simulateTouch(matching: true, finger: nil),
            .simulateTouch(matching: false, finger: "index"), .daemonStatus,
            .openOwnerSession(passcode: passcode), .closeOwnerSession,
            .setEntitlement(app: "/usr/bin/a", group: "shared", granted: true), .listEntitlements,
            .eraseUnopenableKeychain,
            .openOwnerSessionByBiometry(timeout: 0.1), .identify,
            .declareApp(
                executable: "/usr/bin/a",
                declaration: AppDeclaration(
                    applicationIdentifier: "T.com.example.a", keychainAccessGroups: ["T.shared", "T.other"],
                    applicationGroups: ["group.com.example"])),
            .declareApp(executable: "/usr/bin/a", declaration: nil), .listDeclaredApps,
            .createEnclaveKey(accessibility: .whenUnlockedThisDeviceOnly, accessControl: nil),
            .createEnclaveKey(
                accessibility: .whenUnlocked,
                accessControl: try? AccessControl(protection: .whenUnlocked, flags: [.privateKeyUsage, .userPresence])),
            .useEnclaveKey(
                EnclaveKeyUse(sealedKey: Data([1, 2, 3]), operation: .sign(digest: Data(repeating: 9, count: 32)))),
            .useEnclaveKey(
                EnclaveKeyUse(
                    sealedKey: Data([1]), operation: .keyAgreement(peerPublicKey: Data(repeating: 4, count: 65)),
                    authenticationContext: context)),
            .beginImport, .importChunk(file: "keybag", offset: 4096, bytes: SecretBytes(utf8: "part")),
            .finishImport(passcode: nil),
            .finishImport(passcode: passcode),
            .authenticateOwner(
                OwnerAuthentication(
                    factors: .biometryOrPasscode, reason: "To add a new chore", cancelTitle: "Cancel",
                    fallbackTitle: "Enter Passcode", context: context)),
            .authenticateOwner(
                OwnerAuthentication(
                    factors: .passcode, reason: "r", cancelTitle: "", fallbackTitle: nil, context: context,
                    terminal: "/dev/pts/3")),
            .servePrompts,
            .unlockBySheet(
                OwnerAuthentication(
                    factors: .passcode, reason: "To unlock", cancelTitle: "", fallbackTitle: nil, context: context)),
            .openOwnerSessionBySheet(
                OwnerAuthentication(
                    factors: .biometryOrPasscode, reason: "To see every app's items", cancelTitle: "",
                    fallbackTitle: "Enter Passcode", context: context)),
            .actForProcess(ProcessReference(pid: 4242, startTime: 1_234_567)),
            .searchSecretItems(["svce": .string("secret-service:login"), "ss:xdg:schema": .string("s")]),
            .searchSecretItemsWithContentTypes(["ss:xdg:schema": .string("s")]),
            .readOtherAppSecretItem(service: "secret-service:login", account: "0123abcd"),
            .watchChanges,
            .allowOtherAppSecretItem(
                service: "secret-service:login", account: "0123abcd",
                OwnerAuthentication(
                    factors: .biometryOrPasscode, reason: "", cancelTitle: "Deny", fallbackTitle: nil,
                    context: context)),
            .unlockByBiometry(timeout: 0.5),
            .openLoginSession(ProcessReference(pid: 1717, startTime: 98_765)),
            .closeLoginSession(ProcessReference(pid: 1717, startTime: 98_765), lockWhenLast: true),
            .beginBackup(password: SecretBytes(utf8: "backup password")), .continueBackup,
            .beginRestore(password: SecretBytes(utf8: "backup password"), replacing: true),
            .restoreChunk(SecretBytes(Data([0x89, 0x4B, 0x43]))), .finishRestore, .keychainProtection,
            .sync(.setUp(remote: "git@host:me/keychain.git", deviceName: "laptop")),
            .sync(.join(remote: "/srv/keychain.git", deviceName: "server")), .sync(.confirmJoin(code: "012345")),
            .sync(.now), .sync(.status), .sync(.approve(code: "987654")), .sync(.answer(device: nil)),
            .sync(.answer(device: "0a1b")), .sync(.showJoinCode), .sync(.pickBranch(keepThisDevices: true)),
            .sync(.removeDevice("0a1b2c3d")),
        ]
    }

    static var everyReply: [Result<KeychainReply, KeychainError>] {
        let control = try? AccessControl(protection: .whenUnlocked, flags: .userPresence)
        return [
            .success(.done),
            .success(
                .items([
                    ItemResult(
                        itemClass: .genericPassword, attributes: ["acct": .string("a")], accessControl: control,
                        secret: SecretBytes(utf8: "s"), persistentRef: Data([1])), ItemResult(itemClass: .key),
                ])),
            .success(
                .status(
                    DeviceStatus(
                        passcodeSet: true, unlockedClasses: [.afterFirstUnlock, .whenUnlocked], failedAttempts: 5,
                        secondsUntilNextAttempt: 59.5, eraseAfterFailedAttempts: true,
                        syncStopped: "the circle's history forked at version 6"))),
            .success(
                .biometry(
                    BiometryStatus(
                        sensor: .simulated, enrolledFingers: ["thumb"], isLockedOut: true, passcodeRequired: false,
                        consecutiveFailures: 5, domainState: Data([7]), passcodeSet: true))),
            .success(.match(.noTouch)), .success(.match(.matched)), .success(.match(.notMatched)), .success(.count(42)),
            .success(
                .daemon(
                    DaemonStatus(
                        mode: "per-user", pid: 42, uptime: 1.5, connectedClients: 3, idleLockSeconds: 300,
                        device: DeviceStatus(
                            passcodeSet: false, unlockedClasses: [], failedAttempts: 0, secondsUntilNextAttempt: 0,
                            eraseAfterFailedAttempts: false),
                        sheets: "pinentry-curses (/usr/bin/pinentry-curses)"))),
            .success(.entitlements(["/usr/bin/a": ["one", "two"], "/usr/bin/b": []])),
            .success(
                .declaredApps([
                    "/usr/bin/a": AppDeclaration(applicationIdentifier: "T.a", keychainAccessGroups: ["T.g"]),
                    "/usr/bin/b": AppDeclaration(applicationIdentifier: "T.b"),
                ])),
            .success(.enclaveKey(sealedKey: Data([1, 2]), publicKey: Data(repeating: 4, count: 65))),
            .success(.keyOutput(SecretBytes(Data([3, 0, 1])))),
            .success(.authenticationFailed(.userFallback, message: "the user chose the fallback")),
            .success(
                .secretItemMatches([
                    SecretItemMatch(service: "secret-service:login", account: "a1", readable: true),
                    SecretItemMatch(service: "secret-service:login", account: "b2", readable: false),
                    SecretItemMatch(service: "secret-service:login", account: "c3", readable: true, label: "GitHub"),
                ])),
            .success(
                .secretItemMatches([
                    SecretItemMatch(
                        service: "secret-service:login", account: "d4", readable: true, label: "Mail",
                        contentType: "text/plain"),
                    SecretItemMatch(service: "secret-service:login", account: "e5", readable: false),
                ])),
            .success(.backupPart(BackupPart(bytes: Data([1, 2, 3]), done: 1000, total: 2500))),
            .success(
                .backupPart(
                    BackupPart(
                        bytes: Data(), done: 2500, total: 2500,
                        summary: BackupSummary(migratable: 2400, thisDeviceOnly: 90, leftOut: 10)))),
            .success(.restored(RestoreReport(added: 5, replaced: 4, kept: 3, fromAnotherDevice: 2))),
            .success(
                .keychainProtection(
                    KeychainProtection(
                        sealedBy: "device:/dev/tpmrm0", counterIndex: 0x0100_1234, counterValue: 1 << 40))),
            .success(.keychainProtection(KeychainProtection(sealedBy: nil, counterIndex: nil, counterValue: nil))),
            .success(.sync(SyncReport(membership: .none))),
            .success(
                .sync(
                    SyncReport(
                        membership: .member, remote: "git://127.0.0.1/circle.git",
                        members: [
                            SyncReport.Device(id: "00ff", name: "laptop", code: nil, isThisDevice: true),
                            SyncReport.Device(id: "11ee", name: "desktop", code: "123456", isThisDevice: false),
                        ],
                        requests: [SyncReport.Device(id: "22dd", name: "server", code: "654321", isThisDevice: false)],
                        epoch: 3, lastSync: Date(timeIntervalSince1970: 1_800_000_000.5),
                        failingSince: Date(timeIntervalSince1970: 1_800_000_100), lastError: "unreachable",
                        published: 7, applied: 2, refused: ["a record was moved"]))),
            .failure(KeychainError(status: -25308, message: "é needs a prompt", requiredAuthentication: control)),
            .failure(KeychainError(.errSecItemNotFound, "nothing")),
        ]
    }

    @Test func everyRequestSurvivesTheTrip() throws {
        for request in Self.everyRequest {
            let body = RequestCoder.encode(request)
            let parsed = try RequestCoder.decode(body)
            #expect(RequestCoder.encode(parsed) == body, "\(request)")
        }
    }

    @Test func aQueryWithAnUnknownOptionIsRefused() throws {
        var body = RequestCoder.encode(.copyMatching(ItemQuery(itemClass: .genericPassword)))
        // The options byte, then an absent item list, end the query.
        #expect(body.suffix(2) == [0, 0])
        body.removeLast()
        body[body.count - 1] = 4
        body.append(0)
        #expect(throws: WireError.self) { try RequestCoder.decode(body) }
        body[body.count - 2] = 3
        guard case .copyMatching(let query) = try RequestCoder.decode(body) else { Issue.record("not a query"); return }
        #expect(query.skipsItemsNeedingAuthentication && query.matchesCaseInsensitively)
    }

    @Test func everyReplySurvivesTheTrip() throws {
        for reply in Self.everyReply {
            let body = ReplyCoder.encode(reply)
            let parsed = try ReplyCoder.decode(body)
            #expect(ReplyCoder.encode(parsed) == body)
        }
        guard
            case .failure(let error) = try ReplyCoder.decode(
                ReplyCoder.encode(.failure(KeychainError(status: -25308, message: "m"))))
        else {
            Issue.record("an error came back as a result")
            return
        }
        #expect(error.status == -25308)
    }

    /// An error's message crosses whole when it fits the reader's 4,096 bytes, and is cut after
    /// its last whole scalar that fits when it does not (a scalar is never split).
    @Test(arguments: [
        ("short", 5), (String(repeating: "a", count: 4096), 4096), (String(repeating: "a", count: 5000), 4096),
        ("a" + String(repeating: "😀", count: 1100), 4093),
    ])
    func anErrorMessageCrossesWithinTheLimit(message: String, expectedBytes: Int) throws {
        guard
            case .failure(let error) = try ReplyCoder.decode(
                ReplyCoder.encode(.failure(KeychainError(status: -25300, message: message))))
        else {
            Issue.record("an error came back as a result")
            return
        }
        #expect(error.message.utf8.count == expectedBytes)
        #expect(message.hasPrefix(error.message))
    }

    /// Expects `decode` to refuse every prefix of `body`, and `body` with a byte more unless
    /// `extraByte` is false.
    static func expectRefusesEveryCut<Decoded>(
        of body: [UInt8], extraByte: Bool = true, _ decode: ([UInt8]) throws -> Decoded
    ) {
        for length in 0..<body.count {
            #expect(throws: WireError.self) { try decode(Array(body.prefix(length))) }
        }
        if extraByte { #expect(throws: WireError.self) { try decode(body + [0]) } }
    }

    @Test func everyTruncationAndEveryExtraByteIsRefused() throws {
        for request in Self.everyRequest {
            Self.expectRefusesEveryCut(of: RequestCoder.encode(request), RequestCoder.decode)
        }
        for reply in Self.everyReply {
            Self.expectRefusesEveryCut(of: ReplyCoder.encode(reply), extraByte: false, ReplyCoder.decode)
        }
    }

    /// Search matches without content types go out as keychaind always sent them (tag 13, each
    /// match's service, account, readable, label), so that a bridge of an earlier build reads
    /// them; only matches carrying content types, which only the request for them gets, go
    /// under tag 19 (the same, then each content type).
    @Test func searchMatchesKeepTheirReleasedLayout() throws {
        var released = WireWriter()
        released.u8(WireFrame.version)
        released.u8(0)
        released.u8(13)
        released.u32(2)
        for (account, readable, label) in [("a1", true, "Mail" as String?), ("b2", false, nil)] {
            released.string("secret-service:login")
            released.string(account)
            released.bool(readable)
            released.optional(label) { writer, label in writer.string(label) }
        }
        let matches = [
            SecretItemMatch(service: "secret-service:login", account: "a1", readable: true, label: "Mail"),
            SecretItemMatch(service: "secret-service:login", account: "b2", readable: false),
        ]
        #expect(ReplyCoder.encode(.success(.secretItemMatches(matches))) == released.bytes)

        var typed = matches
        typed[0].contentType = "text/plain"
        let withTypes = ReplyCoder.encode(.success(.secretItemMatches(typed)))
        #expect(withTypes[2] == 19)
        guard case .success(.secretItemMatches(let read)) = try ReplyCoder.decode(withTypes) else {
            Issue.record("not matches")
            return
        }
        #expect(read == typed)
    }

    @Test func anotherVersionOrAnUnknownRequestIsRefused() throws {
        #expect(throws: WireError.self) { try RequestCoder.decode([2, 5]) }
        #expect(throws: WireError.self) { try RequestCoder.decode([WireFrame.version, 0]) }
        #expect(throws: WireError.self) { try RequestCoder.decode([WireFrame.version, 200]) }
        #expect(
            try { if case .deviceStatus = try RequestCoder.decode([WireFrame.version, 5]) { true } else { false } }())
    }

    @Test func fieldsOverTheirLimitsAreRefusedBeforeAllocation() throws {
        // A secret one byte over the keychain's limit.
        var writer = WireWriter()
        writer.u8(WireFrame.version); writer.u8(7)
        writer.secret(SecretBytes(Array(repeating: 1, count: KeychainLimits.maximumSecretSize + 1)))
        #expect(throws: WireError.self) { try RequestCoder.decode(writer.finish()) }
        // A length of 4 GiB with a few bytes behind it, and a list claiming 4 billion entries.
        #expect(throws: WireError.self) {
            try RequestCoder.decode([WireFrame.version, 7, 0xff, 0xff, 0xff, 0xff, 1, 2])
        }
        #expect(throws: WireError.self) {
            try RequestCoder.decode(
                [WireFrame.version, 2, 0, 0, 0, 4] + Array("genp".utf8) + [0xff, 0xff, 0xff, 0xff])
        }
        // Text that is not UTF-8, a flag that is not 0 or 1, access control bits Apple does not have.
        #expect(throws: WireError.self) {
            try RequestCoder.decode([WireFrame.version, 18, 0, 0, 0, 1, 0xff, 0, 0, 0, 0])
        }
        #expect(throws: WireError.self) { try RequestCoder.decode([WireFrame.version, 20, 2, 0, 0, 0, 0]) }
        var control = WireWriter()
        control.u8(WireFrame.version); control.u8(1)
        WireValuesProbe.newItem(with: &control, flags: 1 << 40)
        #expect(throws: WireError.self) { try RequestCoder.decode(control.finish()) }
        // An oversized body.
        #expect(throws: WireError.self) {
            try RequestCoder.decode(Array(repeating: 0, count: WireFrame.maximumRequest + 1))
        }
    }

    /// Text is read as UTF-8 exactly: what is not (a lone continuation byte, a truncated
    /// sequence whose replacement is as long as it, an overlong form, a surrogate, a code point
    /// past U+10FFFF) is refused, and valid text, a replacement character included, is kept.
    @Test(
        arguments: [
            [0x80], [0xF0, 0x9F, 0x98], [0xF0, 0x9F, 0x98, 0x41], [0xC0, 0xAF], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0x61, 0xFF],
        ] as [[UInt8]])
    func textThatIsNotUTF8IsRefused(_ bytes: [UInt8]) {
        var writer = WireWriter()
        writer.data(Data(bytes))
        var reader = WireReader(writer.finish())
        #expect(throws: WireError.self) { try reader.string(max: 64) }
    }

    @Test(arguments: ["", "a", "Café", "\u{FFFD}", "a\u{FFFD}b", "😀", "\u{10FFFF}"])
    func validTextIsReadUnchanged(_ text: String) throws {
        var writer = WireWriter()
        writer.string(text)
        var reader = WireReader(writer.finish())
        #expect(try reader.string(max: 64) == text)
    }

    /// Associated data built a field at a time is the same bytes as from a list of fields: a
    /// difference would make every stored item unreadable.
    @Test func theLengthPrefixedBuilderEncodesAsTheListDoes() {
        var builder = LengthPrefixed.Builder(label: "label v1", capacity: 0)
        builder.append(utf8: "Café")
        builder.append(Data([1, 2, 3]))
        builder.append(byte: 1)
        builder.append(Data())
        builder.append(bigEndian: 0x0102_0304_0506_0708)
        let list = LengthPrefixed.encode(
            label: "label v1",
            [Data("Café".utf8), Data([1, 2, 3]), Data([1]), Data(), Data([1, 2, 3, 4, 5, 6, 7, 8])])
        #expect(builder.encoded() == list)
        #expect(
            list == Data("label v1".utf8) + Data([0, 0, 0, 5]) + Data("Café".utf8)
                + Data([0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]))
    }

    @Test func randomAndMutatedBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        let valid = Self.everyRequest.map(RequestCoder.encode)
        var parsed = 0
        for round in 0..<50_000 {
            var body: [UInt8]
            if round % 2 == 0 {
                body = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if round % 4 == 0, !body.isEmpty { body[0] = WireFrame.version }
            } else {
                body = valid[round % valid.count]
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !body.isEmpty {
                    body[Int.random(in: 0..<body.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            if (try? RequestCoder.decode(body)) != nil { parsed += 1 }
        }
        // Some mutations land in free-form fields and still parse: the parser is exercised on both sides.
        #expect(parsed > 0)
    }
}

/// Writes an add request by hand, with access control bits of the test's choosing.
enum WireValuesProbe {
    static func newItem(with writer: inout WireWriter, flags: UInt64) {
        writer.string("genp")
        writer.u32(0)  // no attributes
        writer.u8(0)  // no access group
        writer.u8(0)  // no accessibility
        writer.bool(false)
        writer.u8(0)  // no secret
        writer.int(0)
        writer.u8(1)  // an access control…
        writer.string("akpu")
        writer.u64(flags)  // …with unknown bits
        writer.u8(0)  // no application password
        writer.u8(0)  // no kept dates
    }
}
