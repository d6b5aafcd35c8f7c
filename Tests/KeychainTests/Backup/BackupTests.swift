import Crypto
import Foundation
import Keychain
import KeychainProtocol
import Testing

/// Encrypted backups as iOS makes them: exactly the migratable items move to another device,
/// byte for byte; the same device gets its device-only items back too; what already exists is
/// kept or replaced by the stated rule; a wrong password or a damaged file changes nothing.
extension SecItemAPITests {
    @Suite struct BackupTests {
        static let password = "correct horse battery staple"

        /// An item as the owner sees it: its class, every attribute, its access control, and
        /// its secret (nil when reading it needs an authentication).
        struct Snapshot: Hashable {
            var itemClass: ItemClass
            var attributes: [String: AttributeValue]
            var accessControl: AccessControl?
            var secret: Data?
        }

        /// Every item of `keychain`.
        static func snapshot(_ keychain: TestKeychain) throws -> Set<Snapshot> {
            var items = Set<Snapshot>()
            for itemClass in ItemClass.allCases where itemClass.isImplemented {
                var query = ItemQuery(
                    itemClass: itemClass, attributes: [:], synchronizable: .any, limit: .all,
                    returns: [.attributes, .persistentRef])
                guard case .items(let found) = try orNone({ try keychain.perform(.copyMatching(query), owner: true) })
                else { continue }
                query.returns = [.attributes, .data]
                query.skipsItemsNeedingAuthentication = true
                var secrets: [[String: AttributeValue]: Data] = [:]
                if case .items(let readable) = try orNone({ try keychain.perform(.copyMatching(query), owner: true) }) {
                    for item in readable { secrets[item.attributes ?? [:]] = item.secret?.copyData() }
                }
                for item in found {
                    let attributes = item.attributes ?? [:]
                    items.insert(
                        Snapshot(
                            itemClass: itemClass, attributes: attributes, accessControl: item.accessControl,
                            secret: secrets[attributes]))
                }
            }
            return items
        }

        private static func orNone(_ body: () throws -> KeychainReply) throws -> KeychainReply {
            do {
                return try body()
            } catch let error as KeychainError where error.status == KeychainError.errSecItemNotFound.status {
                return .items([])
            }
        }

        /// The backup file of `keychain`, made by the owner.
        static func backup(_ keychain: TestKeychain, password: String = password) throws -> (Data, BackupSummary) {
            guard
                case .backupPart(var part) = try keychain.perform(
                    .beginBackup(password: SecretBytes(utf8: password)), owner: true)
            else { throw KeychainError.errSecInternalComponent }
            var file = part.bytes
            while part.summary == nil {
                guard case .backupPart(let next) = try keychain.perform(.continueBackup, owner: true) else {
                    throw KeychainError.errSecInternalComponent
                }
                part = next
                file.append(part.bytes)
            }
            return (file, try #require(part.summary))
        }

        /// Restores `file` into `keychain` as the owner, in parts of `partSize` bytes.
        static func restore(
            _ file: Data, into keychain: TestKeychain, password: String = password, replacing: Bool = false,
            partSize: Int = 4096
        ) throws(KeychainError) -> RestoreReport {
            _ = try keychain.perform(
                .beginRestore(password: SecretBytes(utf8: password), replacing: replacing), owner: true)
            var offset = 0
            while offset < file.count {
                let end = min(offset + partSize, file.count)
                _ = try keychain.perform(.restoreChunk(SecretBytes(file[offset..<end])), owner: true)
                offset = end
            }
            guard case .restored(let report) = try keychain.perform(.finishRestore, owner: true) else {
                throw KeychainError.errSecInternalComponent
            }
            return report
        }

        /// A keychain with a passcode and an item of every kind the rules tell apart.
        static func keychainWithEveryKind() throws -> TestKeychain {
            let keychain = try TestKeychain.make().install()
            try keychain.setPasscode("1234")
            func add(_ account: String, _ accessible: CFString? = nil, _ extra: [String: Any] = [:]) throws {
                var attributes = extra
                if let accessible { attributes[kSecAttrAccessible as String] = accessible }
                attributes[kSecAttrLabel as String] = "label of \(account)"
                try #require(
                    addPassword(account: account, secret: "secret of \(account)", extra: attributes) == errSecSuccess)
            }
            try add("when-unlocked", kSecAttrAccessibleWhenUnlocked)
            try add(
                "after-first-unlock", kSecAttrAccessibleAfterFirstUnlock, [kSecAttrGeneric as String: Data([1, 2])])
            try add("synchronizable", kSecAttrAccessibleWhenUnlocked, [kSecAttrSynchronizable as String: true])
            try add("this-device-only", kSecAttrAccessibleWhenUnlockedThisDeviceOnly)
            try add("after-first-unlock-this-device", kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
            try add("passcode-set", kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly)
            var error: Unmanaged<CFError>?
            let control = try #require(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, &error))
            try add("access-control", nil, [kSecAttrAccessControl as String: control])
            try #require(
                SecItemAdd(
                    [
                        kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "web",
                        kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecAttrPort: 443, kSecValueData: Data("web".utf8),
                    ] as NSDictionary, nil) == errSecSuccess)
            let certificate = try TestCertificates.secCertificate(commonName: "backup.example", serial: 7, issuer: "CA")
            try #require(
                SecItemAdd([kSecClass: kSecClassCertificate, kSecValueRef: certificate] as NSDictionary, nil)
                    == errSecSuccess)
            for (tag, token) in [("software key", nil), ("enclave key", kSecAttrTokenIDSecureEnclave as String?)] {
                var parameters: [CFString: Any] = [
                    kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256,
                    kSecPrivateKeyAttrs: [kSecAttrIsPermanent: true, kSecAttrApplicationTag: Data(tag.utf8)]
                        as NSDictionary,
                ]
                if let token { parameters[kSecAttrTokenID] = token }
                try #require(SecKeyCreateRandomKey(parameters as NSDictionary, &error) != nil, "\(tag)")
            }
            return keychain
        }

        /// What may go to another device: no ThisDeviceOnly accessibility, no access control, no
        /// token.
        static func migrates(_ item: Snapshot) -> Bool {
            guard case .string(let accessible)? = item.attributes["pdmn"],
                let accessibility = Accessibility(rawValue: accessible)
            else { return false }
            return !accessibility.isThisDeviceOnly && item.accessControl == nil && item.attributes["tkid"] == nil
        }

        @Test func exactlyTheMigratableItemsComeBackOnAnotherDeviceByteForByte() throws {
            let source = try Self.keychainWithEveryKind()
            defer { source.remove() }
            let before = try Self.snapshot(source)
            #expect(before.count == 11)
            let (file, summary) = try Self.backup(source)
            // genp ×3, inet, cert, software key: 6 for any device;
            // ThisDeviceOnly ×2 and the access control: 3 sealed to this device; the
            // WhenPasscodeSet item and the Enclave key stay out.
            #expect(summary == BackupSummary(migratable: 6, thisDeviceOnly: 3, leftOut: 2))
            let secrets = ["secret of when-unlocked", "secret of this-device-only", "label of", "backup.example"]
            for secret in secrets {
                #expect(file.range(of: Data(secret.utf8)) == nil, "\(secret) is in the clear")
            }

            // Another machine: another directory, so another device secret.
            let target = try TestKeychain.make()
            defer { target.remove() }
            let report = try Self.restore(file, into: target)
            #expect(report == RestoreReport(added: 6, replaced: 0, kept: 0, fromAnotherDevice: 3))
            let after = try Self.snapshot(target)
            #expect(after == before.filter(Self.migrates))
            #expect(after.allSatisfy { $0.secret != nil })
        }

        @Test func theSameDeviceGetsItsDeviceOnlyItemsBackWithTheirAccessControl() throws {
            let keychain = try Self.keychainWithEveryKind()
            defer { keychain.remove() }
            let before = try Self.snapshot(keychain)
            let (file, _) = try Self.backup(keychain)
            #expect(try KeychainDevice.erase(passcode: SecretBytes(utf8: "1234")) == 11)
            try keychain.setPasscode("5678")
            let report = try Self.restore(file, into: keychain)
            #expect(report == RestoreReport(added: 9, replaced: 0, kept: 0, fromAnotherDevice: 0))
            let left = before.filter { item in
                item.attributes["tkid"] != nil || item.attributes["pdmn"] == .string("akpu")
            }
            #expect(left.count == 2)
            #expect(try Self.snapshot(keychain) == before.subtracting(left))
        }

        @Test func theNewerCopyIsKeptUnlessTheRestoreReplaces() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["kept", "changed", "deleted"] { #expect(addPassword(account: account) == errSecSuccess) }
            let (file, _) = try Self.backup(keychain)
            Thread.sleep(forTimeInterval: 0.01)
            let changed = [kSecClass: kSecClassGenericPassword, kSecAttrAccount: "changed"] as NSDictionary
            #expect(SecItemUpdate(changed, [kSecValueData: Data("newer".utf8)] as NSDictionary) == errSecSuccess)
            #expect(
                SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "deleted"] as NSDictionary)
                    == errSecSuccess)

            #expect(
                try Self.restore(file, into: keychain)
                    == RestoreReport(added: 1, replaced: 0, kept: 2, fromAnotherDevice: 0))
            var query =
                [kSecClass: kSecClassGenericPassword, kSecAttrAccount: "changed", kSecReturnData: true]
                as [CFString: Any]
            #expect(copyMatching(query as [String: Any]).1 as? Data == Data("newer".utf8))

            #expect(
                try Self.restore(file, into: keychain, replacing: true)
                    == RestoreReport(added: 0, replaced: 3, kept: 0, fromAnotherDevice: 0))
            #expect(copyMatching(query as [String: Any]).1 as? Data == Data("s3cr3t".utf8))
            query[kSecAttrAccount] = "deleted"
            #expect(copyMatching(query as [String: Any]).1 as? Data == Data("s3cr3t".utf8))
        }

        @Test func aWrongPasswordOrADamagedFileChangesNothing() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["one", "two"] { #expect(addPassword(account: account) == errSecSuccess) }
            let (file, _) = try Self.backup(keychain)
            #expect(
                SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "two"] as NSDictionary)
                    == errSecSuccess)
            let before = try Self.snapshot(keychain)

            var flipped = file
            flipped[file.count - 20] ^= 0x01
            var foreign = Data("not a backup at all, but long enough to hold a header and then some".utf8)
            foreign.append(file.suffix(40))
            let cases: [(String, Data, String, KeychainError)] = [
                ("a wrong password", file, "wrong password", .errSecAuthFailed),
                ("a flipped bit in the last chunk", flipped, Self.password, .errSecDecode),
                ("a file cut short", file.prefix(file.count - 1), Self.password, .errSecDecode),
                ("a file with its header only", file.prefix(63), Self.password, .errSecDecode),
                ("bytes after the end", file + Data([0, 0, 0, 16]), Self.password, .errSecDecode),
                ("a foreign file", foreign, Self.password, .errSecDecode),
            ]
            for (name, bytes, password, expected) in cases {
                #expect(throws: expected, "\(name)") { _ = try Self.restore(bytes, into: keychain, password: password) }
                #expect(try Self.snapshot(keychain) == before, "\(name) changed the keychain")
            }
            // A restore needs the owner, as a backup does.
            #expect(throws: KeychainError.errSecMissingEntitlement) {
                _ = try keychain.perform(.beginRestore(password: SecretBytes(utf8: Self.password), replacing: false))
            }
            #expect(throws: KeychainError.errSecMissingEntitlement) {
                _ = try keychain.perform(.beginBackup(password: SecretBytes(utf8: Self.password)))
            }
        }

        /// A part holds at most about a megabyte, whatever its items, so that large items never
        /// make a reply larger than the wire takes.
        @Test func largeItemsComeInPartsOfAboutAMegabyte() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let large = String(repeating: "x", count: KeychainLimits.maximumSecretSize)
            for index in 0..<200 { #expect(addPassword(account: "large \(index)", secret: large) == errSecSuccess) }
            guard case .backupPart(var part) = try keychain.perform(
                .beginBackup(password: SecretBytes(utf8: Self.password)), owner: true)
            else { throw KeychainError.errSecInternalComponent }
            var sizes: [Int] = []
            var file = part.bytes
            while part.summary == nil {
                guard case .backupPart(let next) = try keychain.perform(.continueBackup, owner: true) else {
                    throw KeychainError.errSecInternalComponent
                }
                part = next
                sizes.append(part.bytes.count)
                file.append(part.bytes)
            }
            #expect(sizes.count >= 3 && sizes.allSatisfy { $0 < (1 << 20) + (100 << 10) }, "\(sizes)")
            let target = try TestKeychain.make()
            defer { target.remove() }
            #expect(try Self.restore(file, into: target, partSize: 512 << 10).added == 200)
        }

        @Test func aLockedKeychainIsNeitherBackedUpNorRestoredInto() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "one") == errSecSuccess)
            try keychain.setPasscode("1234")
            let (file, _) = try Self.backup(keychain)
            try keychain.lock()
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { _ = try Self.backup(keychain) }
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { _ = try Self.restore(file, into: keychain) }
        }
    }
}
