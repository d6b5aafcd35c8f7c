import Foundation
import Keychain
import KeychainEmbedded
import Testing

extension SecItemAPITests {
    @Suite struct UpdateDeleteTests {
        let service: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc"]

        @Test func updateChangesEveryMatch() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["a", "b", "c"] { addPassword(account: account) }
            addPassword(service: "other", account: "a", secret: "untouched")
            let status = SecItemUpdate(
                service as CFDictionary,
                [kSecValueData as String: Data("new".utf8), kSecAttrLabel as String: "L"] as CFDictionary)
            #expect(status == errSecSuccess)
            let (_, result) = copyMatching(
                service.merging([
                    kSecReturnData as String: true, kSecReturnAttributes as String: true,
                    kSecMatchLimit as String: kSecMatchLimitAll,
                ]) { $1 })
            let items = try #require(result as? [[String: Any]])
            #expect(items.count == 3)
            #expect(
                items.allSatisfy {
                    $0[kSecValueData as String] as? Data == Data("new".utf8)
                        && $0[kSecAttrLabel as String] as? String == "L"
                })
            let (_, other) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "other",
                kSecReturnData as String: true,
            ])
            #expect(other as? Data == Data("untouched".utf8))
        }

        /// A wrapper's update with its whole add dictionary as the query: on iOS the data is not
        /// a search key there, so the item is updated, or `errSecItemNotFound` says to add it.
        @Test func theDataInAnUpdatesQueryIsNotASearchKey() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var addDictionary = service.merging([
                kSecAttrAccount as String: "a", kSecValueData as String: Data("old".utf8),
            ]) { $1 }
            let changes = [kSecValueData as String: Data("new".utf8)] as CFDictionary
            #expect(SecItemUpdate(addDictionary as CFDictionary, changes) == errSecItemNotFound)
            #expect(SecItemAdd(addDictionary as CFDictionary, nil) == errSecSuccess)
            addDictionary[kSecValueData as String] = Data("not what is stored".utf8)
            #expect(SecItemUpdate(addDictionary as CFDictionary, changes) == errSecSuccess)
            let (_, data) = copyMatching(service.merging([kSecReturnData as String: true]) { $1 })
            #expect(data as? Data == Data("new".utf8))
        }

        /// Apple: "The query dictionary for update can't contain item return result keys, because
        /// SecItemUpdate only returns a status."
        @Test(arguments: [
            kSecReturnData as String, kSecReturnAttributes as String, kSecReturnRef as String,
            kSecReturnPersistentRef as String,
        ])
        func anUpdatesQueryCannotAskForResults(returnKey: String) throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "old")
            let query = service.merging([returnKey: true]) { $1 }
            let changes = [kSecValueData as String: Data("new".utf8)] as CFDictionary
            #expect(SecItemUpdate(query as CFDictionary, changes) == errSecParam)
            let unset = service.merging([returnKey: false]) { $1 }
            #expect(SecItemUpdate(unset as CFDictionary, changes) == errSecSuccess)
        }

        @Test func deleteRemovesEveryMatch() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["a", "b", "c"] { addPassword(account: account) }
            addPassword(service: "other", account: "a")
            #expect(SecItemDelete(service as CFDictionary) == errSecSuccess)
            #expect(copyMatching(service).0 == errSecItemNotFound)
            #expect(
                copyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "other"]).0
                    == errSecSuccess)
            #expect(SecItemDelete(service as CFDictionary) == errSecItemNotFound)
        }

        @Test func updateOrDeleteOfNothingIsErrSecItemNotFound() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary)
                    == errSecItemNotFound)
            #expect(SecItemDelete(service as CFDictionary) == errSecItemNotFound)
        }

        @Test func datesAreMaintainedAndReadOnly() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a")
            let query = service.merging([kSecReturnAttributes as String: true]) { $1 }
            let before = try #require(copyMatching(query).1 as? [String: Any])
            Thread.sleep(forTimeInterval: 0.01)
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecAttrComment as String: "c"] as CFDictionary)
                    == errSecSuccess)
            let after = try #require(copyMatching(query).1 as? [String: Any])
            let created = try #require(before[kSecAttrCreationDate as String] as? Date)
            #expect(after[kSecAttrCreationDate as String] as? Date == created)
            #expect(try #require(after[kSecAttrModificationDate as String] as? Date) > created)
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecAttrCreationDate as String: Date()] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecAttrModificationDate as String: Date()] as CFDictionary)
                    == errSecParam)
            #expect(addPassword(account: "b", extra: [kSecAttrCreationDate as String: Date()]) == errSecParam)
        }

        @Test func attributesToUpdateMayHoldOnlyItemAttributes() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a")
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecReturnData as String: true] as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemUpdate(service as CFDictionary, [kSecClass as String: kSecClassGenericPassword] as CFDictionary)
                    == errSecParam)
        }

        @Test func updateCanMoveAnItemToAnotherAccessibility() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "kept")
            #expect(
                SecItemUpdate(
                    service as CFDictionary,
                    [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock] as CFDictionary) == errSecSuccess
            )
            let (_, result) = copyMatching(
                service.merging([kSecReturnData as String: true, kSecReturnAttributes as String: true]) { $1 })
            let item = try #require(result as? [String: Any])
            #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
            #expect(item[kSecValueData as String] as? Data == Data("kept".utf8))
        }
    }

    @Suite struct MalformedQueryTests {
        @Test func aMissingClassIsErrSecParam() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(SecItemAdd([kSecAttrAccount as String: "a"] as CFDictionary, nil) == errSecParam)
            #expect(copyMatching([kSecAttrAccount as String: "a"]).0 == errSecParam)
        }

        @Test func anUnknownClassIsErrSecNoSuchClass() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(copyMatching([kSecClass as String: "nope"]).0 == errSecNoSuchClass)
            #expect(copyMatching([kSecClass as String: 42]).0 == errSecParam)
        }

        /// An identity is a certificate and its key (``IdentityItemTests``): none in an empty
        /// keychain, and one is added as a SecIdentity, not as attributes.
        @Test func identitiesAreACertificateAndAKey() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(copyMatching([kSecClass as String: kSecClassIdentity]).0 == errSecItemNotFound)
            #expect(SecItemAdd([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecParam)
        }

        @Test(
            arguments: [
                [kSecAttrAccount as String: Date(timeIntervalSince1970: 0)],
                [kSecValueData as String: "not data"],
                [kSecAttrAccessible as String: "nope"],
                [kSecAttrSynchronizable as String: "yes"],
                [kSecReturnData as String: "yes"],
                [kSecMatchLimit as String: "m_LimitSome"],
                [kSecAttrPort as String: 443],
            ] as [[String: any Sendable]])
        func wrongValueTypesAreErrSecParamOrNoSuchAttr(_ extra: [String: any Sendable]) throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc",
            ]
            for (key, value) in extra { query[key] = value }
            let status = SecItemAdd(query as CFDictionary, nil)
            let expected = extra.keys.first == kSecAttrPort as String ? errSecNoSuchAttr : errSecParam
            #expect(status == expected)
            #expect(copyMatching([kSecClass as String: kSecClassGenericPassword]).0 == errSecItemNotFound)
        }

        @Test func unknownAttributeNamesAreErrSecNoSuchAttr() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(copyMatching([kSecClass as String: kSecClassGenericPassword, "zzzz": "x"]).0 == errSecNoSuchAttr)
        }

        @Test func aKeyThatIsNotAStringIsErrSecParam() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let query: NSDictionary = [kSecClass: kSecClassGenericPassword, NSNumber(value: 7): "x"]
            var result: AnyObject?
            #expect(SecItemCopyMatching(query, &result) == errSecParam)
            #expect(SecItemDelete(query) == errSecParam)
        }

        @Test func foundationObjectsReadAsTheirSwiftValues() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let add: NSDictionary = [
                kSecClass: kSecClassGenericPassword, kSecAttrAccount: NSString(string: "k"),
                kSecValueData: NSData(data: Data("v".utf8)),
                kSecAttrSynchronizable: kCFBooleanFalse!, kSecReturnAttributes: kCFBooleanTrue!,
            ]
            var added: AnyObject?
            #expect(SecItemAdd(add, &added) == errSecSuccess)
            #expect((added as? NSDictionary)?[kSecAttrAccount] as? NSString == "k")
            var found: AnyObject?
            let query: NSDictionary = [
                kSecClass: kSecClassGenericPassword, kSecAttrAccount: "k", kSecReturnData: kCFBooleanTrue!,
                kSecMatchLimit: NSNumber(value: 5),
            ]
            #expect(SecItemCopyMatching(query, &found) == errSecSuccess)
            #expect((found as? [Data]) == [Data("v".utf8)])
            #expect(found is NSArray)
        }

        @Test func unsupportedSearchKeysAreNotImplemented() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecMatchSubjectContains as String: "Example",
                ]).0 == errSecUnimplemented)
            #expect(
                copyMatching([kSecClass as String: kSecClassGenericPassword, kSecReturnRef as String: true]).0
                    == errSecUnimplemented)
        }

        @Test func valuesOverTheLimitsAreErrSecDataTooLarge() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let limit = KeychainLimits.maximumSecretSize
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "ok",
                        kSecValueData as String: Data(count: limit),
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "big",
                        kSecValueData as String: Data(count: limit + 1),
                    ] as CFDictionary, nil) == errSecDataTooLarge)
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecAttrAccount as String: String(
                            repeating: "x", count: KeychainLimits.maximumAttributeSize + 1),
                    ] as CFDictionary, nil) == errSecDataTooLarge)
        }

        /// iOS stores a synchronizable item with a ThisDeviceOnly accessibility (its securityd has
        /// no check against it); the accessibility is what keeps it on the device.
        @Test func aSynchronizableItemMayBeThisDeviceOnly() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                addPassword(
                    account: "a",
                    extra: [
                        kSecAttrSynchronizable as String: true,
                        kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                    ]) == errSecSuccess)
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                kSecAttrSynchronizable as String: true, kSecReturnAttributes as String: true,
            ])
            #expect(status == errSecSuccess)
            let attributes = result as? [String: Any] ?? [:]
            #expect(attributes[kSecAttrSynchronizable as String] as? Bool == true, "\(attributes)")
            #expect(
                attributes[kSecAttrAccessible as String] as? String
                    == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String, "\(attributes)")
            // An update may make an existing item so, too.
            addPassword(
                account: "b", extra: [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly])
            #expect(
                SecItemUpdate(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "b"] as CFDictionary,
                    [kSecAttrSynchronizable as String: true] as CFDictionary) == errSecSuccess)
            // An access control with constraints still never syncs.
            var error: Unmanaged<CFError>?
            let control = SecAccessControlCreateWithFlags(
                nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .userPresence, &error)
            #expect(
                addPassword(
                    account: "c",
                    extra: [kSecAttrSynchronizable as String: true, kSecAttrAccessControl as String: control as Any])
                    == errSecParam)
        }

        @Test func theDefaultAccessibilityIsWhenUnlocked() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a")
            let (_, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked, kSecReturnAttributes as String: true,
            ])
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "a")
        }

        @Test func deprecatedAlwaysIsAcceptedAndProtectedAsAfterFirstUnlock() throws {
            #expect(Accessibility.always.protectionClass == .afterFirstUnlock)
            #expect(Accessibility.alwaysThisDeviceOnly.protectionClass == .afterFirstUnlock)
            #expect(Accessibility.alwaysThisDeviceOnly.isThisDeviceOnly)
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                addPassword(account: "a", extra: [kSecAttrAccessible as String: kSecAttrAccessibleAlways])
                    == errSecSuccess)
            #expect(
                copyMatching([
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrAccessible as String: kSecAttrAccessibleAlways,
                ]).0 == errSecSuccess)
        }
    }

    @Suite struct SynchronizableTests {
        @Test func queriesSkipSynchronizableItemsUnlessAsked() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "local")
            addPassword(account: "synced", extra: [kSecAttrSynchronizable as String: true])
            func accounts(_ sync: Any?) -> [String] {
                var query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                    kSecMatchLimit as String: kSecMatchLimitAll,
                ]
                if let sync { query[kSecAttrSynchronizable as String] = sync }
                return ((copyMatching(query).1 as? [[String: Any]]) ?? []).compactMap {
                    $0[kSecAttrAccount as String] as? String
                }.sorted()
            }
            #expect(accounts(nil) == ["local"])
            #expect(accounts(false) == ["local"])
            #expect(accounts(true) == ["synced"])
            #expect(accounts(kSecAttrSynchronizableAny) == ["local", "synced"])
        }
    }

    @Suite struct AccessGroupTests {
        /// As on iOS, the entitlement check comes before the keychain is looked at: a keychain
        /// never written answers a group the app is not entitled to as one written does, and
        /// the refused requests create none.
        @Test func aGroupNotEntitledToIsRefusedBeforeAnyKeychainExists() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "keychain-tests-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            ProcessKeychain.transport = EmbeddedTransport(directory: directory, accessGroups: ["com.example.one"])
            let other: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: "com.example.other",
            ]
            #expect(SecItemDelete(other as CFDictionary) == errSecMissingEntitlement)
            #expect(copyMatching(other).0 == errSecMissingEntitlement)
            let label = [kSecAttrLabel as String: "x"] as CFDictionary
            #expect(SecItemUpdate(other as CFDictionary, label) == errSecMissingEntitlement)
            let item = other.merging([kSecValueData as String: Data("s".utf8)]) { $1 }
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(!FileManager.default.fileExists(atPath: directory.path), "a refused request made a keychain")
        }

        @Test func anAppSeesOnlyItsOwnGroups() throws {
            let keychain = try TestKeychain.make()
            defer { keychain.remove() }
            _ = keychain.install(["com.example.one"])
            addPassword(account: "mine")
            _ = keychain.install(["com.example.two"])
            #expect(copyMatching([kSecClass as String: kSecClassGenericPassword]).0 == errSecItemNotFound)
            #expect(addPassword(account: "mine") == errSecSuccess)
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
            _ = keychain.install(["com.example.one"])
            #expect(copyMatching([kSecClass as String: kSecClassGenericPassword]).0 == errSecSuccess)
        }

        @Test func namingAGroupTheCallerIsNotInIsErrSecMissingEntitlement() throws {
            let keychain = try TestKeychain.make().install(["com.example.one"])
            defer { keychain.remove() }
            #expect(
                addPassword(account: "a", extra: [kSecAttrAccessGroup as String: "com.example.two"])
                    == errSecMissingEntitlement)
            #expect(
                copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: "com.example.two",
                ]).0 == errSecMissingEntitlement)
        }
    }

    @Suite struct SourceCompatibilityTests {
        /// The way iOS code is usually written, unchanged but for the import.
        @Test func iOSStyleCodeCompilesAndRuns() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let addQuery: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.service",
                kSecAttrAccount as String: "user@example.com",
                kSecValueData as String: "password".data(using: .utf8)!,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            SecItemDelete(addQuery as CFDictionary)
            let status = SecItemAdd(addQuery as CFDictionary, nil)
            guard status == errSecSuccess else {
                Issue.record("add failed: \(SecCopyErrorMessageString(status, nil) as String? ?? "")")
                return
            }
            let query =
                [
                    kSecClass: kSecClassGenericPassword,
                    kSecAttrService: "com.example.service",
                    kSecAttrAccount: "user@example.com",
                    kSecReturnData: kCFBooleanTrue!,
                    kSecMatchLimit: kSecMatchLimitOne,
                ] as [CFString: Any]
            var item: CFTypeRef?
            let found = SecItemCopyMatching(query as CFDictionary, &item)
            #expect(found == errSecSuccess)
            guard let data = item as? Data, let password = String(data: data, encoding: .utf8) else {
                Issue.record("no data")
                return
            }
            #expect(password == "password")
            #expect(
                SecCopyErrorMessageString(errSecItemNotFound, nil)
                    == "The specified item could not be found in the keychain.")
        }
    }
}
