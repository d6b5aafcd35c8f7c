import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    @Suite struct DuplicateItemTests {
        @Test func addingTheSameKeyTwiceFailsWithErrSecDuplicateItem() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "alice") == errSecSuccess)
            #expect(addPassword(account: "alice", secret: "other") == errSecDuplicateItem)
            #expect(addPassword(account: "bob") == errSecSuccess)
            #expect(addPassword(service: "other", account: "alice") == errSecSuccess)
        }

        @Test func accessGroupAndSynchronizableArePartOfThePrimaryKey() throws {
            let keychain = try TestKeychain.make().install(["com.example.app", "com.example.shared"])
            defer { keychain.remove() }
            #expect(addPassword(account: "alice") == errSecSuccess)
            #expect(
                addPassword(account: "alice", extra: [kSecAttrAccessGroup as String: "com.example.shared"])
                    == errSecSuccess)
            #expect(addPassword(account: "alice", extra: [kSecAttrSynchronizable as String: true]) == errSecSuccess)
            #expect(
                addPassword(account: "alice", extra: [kSecAttrSynchronizable as String: true]) == errSecDuplicateItem)
        }

        @Test func nonKeyAttributesDoNotMakeAnItemDistinct() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "alice", extra: [kSecAttrLabel as String: "one"]) == errSecSuccess)
            #expect(
                addPassword(
                    account: "alice",
                    extra: [
                        kSecAttrLabel as String: "two",
                        kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
                    ]) == errSecDuplicateItem)
        }

        @Test func internetPasswordKeyIncludesServerProtocolPortAndPath() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            func add(_ port: Int, _ path: String) -> OSStatus {
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                        kSecAttrAccount as String: "alice", kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
                        kSecAttrPort as String: port, kSecAttrPath as String: path,
                        kSecValueData as String: Data("pw".utf8),
                    ] as CFDictionary, nil)
            }
            #expect(add(443, "/") == errSecSuccess)
            #expect(add(443, "/") == errSecDuplicateItem)
            #expect(add(8443, "/") == errSecSuccess)
            #expect(add(443, "/admin") == errSecSuccess)
        }

        @Test func keyClassKeyIncludesApplicationTagAndKeyType() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            func add(_ tag: String) -> OSStatus {
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassSymmetric,
                        kSecAttrKeyType as String: kSecAttrKeyTypeAES, kSecAttrKeySizeInBits as String: 256,
                        kSecAttrApplicationTag as String: Data(tag.utf8), kSecAttrLabel as String: "key",
                        kSecValueData as String: Data(repeating: 7, count: 32),
                    ] as CFDictionary, nil)
            }
            #expect(add("com.example.key1") == errSecSuccess)
            #expect(add("com.example.key1") == errSecDuplicateItem)
            #expect(add("com.example.key2") == errSecSuccess)
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data("com.example.key2".utf8),
                kSecReturnData as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data(repeating: 7, count: 32))
        }

        @Test func anUpdateThatMakesTwoItemsClashFailsAndChangesNothing() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "alice", secret: "a")
            addPassword(account: "bob", secret: "b")
            let status = SecItemUpdate(
                [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "bob"] as CFDictionary,
                [kSecAttrAccount as String: "alice"] as CFDictionary)
            #expect(status == errSecDuplicateItem)
            let (found, data) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "bob",
                kSecReturnData as String: true,
            ])
            #expect(found == errSecSuccess)
            #expect(data as? Data == Data("b".utf8))
        }
    }

    @Suite struct MatchLimitTests {
        @Test func theDefaultLimitIsOneAndReturnsASingleValue() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "1")
            addPassword(account: "b", secret: "2")
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true]
            let (status, result) = copyMatching(query)
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("1".utf8))
            let (explicit, one) = copyMatching(query.merging([kSecMatchLimit as String: kSecMatchLimitOne]) { $1 })
            #expect(explicit == errSecSuccess)
            #expect(one is Data)
        }

        @Test func limitAllReturnsAnArrayOfEveryMatch() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["a", "b", "c"] { addPassword(account: account, secret: account) }
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect(status == errSecSuccess)
            let items = try #require(result as? [[String: Any]])
            #expect(items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted() == ["a", "b", "c"])
        }

        @Test func aNumericLimitReturnsAtMostThatMany() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["a", "b", "c"] { addPassword(account: account) }
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                kSecMatchLimit as String: 2,
            ])
            #expect(status == errSecSuccess)
            #expect((result as? [Any])?.count == 2)
        }

        @Test func aLimitOfTheNumberOneIsKSecMatchLimitOne() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["a", "b"] { addPassword(account: account) }
            // An NSNumber holding 1 is told apart from a boolean (on Linux it also casts to Bool).
            for limit: Any in [1, NSNumber(value: 1), Int32(1)] {
                let (status, result) = copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                    kSecMatchLimit as String: limit,
                ])
                #expect(status == errSecSuccess)
                #expect(result is [String: Any], "\(type(of: limit))")
            }
            let (refused, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: true,
            ])
            #expect(refused == errSecParam)
        }

        @Test func noMatchIsErrSecItemNotFoundWithANilResult() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "nobody",
                kSecReturnData as String: true,
            ])
            #expect(status == errSecItemNotFound)
            #expect(result == nil)
        }
    }

    @Suite struct ReturnTypeTests {
        @Test func eachReturnKeyAloneGivesItsOwnType() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "alice", secret: "pw")
            let base: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "alice",
            ]
            #expect(copyMatching(base.merging([kSecReturnData as String: true]) { $1 }).1 as? Data == Data("pw".utf8))
            let attributes = try #require(
                copyMatching(base.merging([kSecReturnAttributes as String: true]) { $1 }).1 as? [String: Any])
            #expect(attributes[kSecAttrAccount as String] as? String == "alice")
            #expect(attributes[kSecAttrService as String] as? String == "svc")
            #expect(attributes[kSecClass as String] as? String == kSecClassGenericPassword as String)
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            #expect(attributes[kSecAttrCreationDate as String] is Date)
            #expect(attributes[kSecValueData as String] == nil)
            #expect(copyMatching(base.merging([kSecReturnPersistentRef as String: true]) { $1 }).1 is Data)
        }

        @Test func severalReturnKeysGiveADictionary() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "alice", secret: "pw")
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true,
                kSecReturnAttributes as String: true, kSecReturnPersistentRef as String: true,
            ])
            #expect(status == errSecSuccess)
            let item = try #require(result as? [String: Any])
            #expect(item[kSecValueData as String] as? Data == Data("pw".utf8))
            #expect(item[kSecValuePersistentRef as String] is Data)
            #expect(item[kSecAttrAccount as String] as? String == "alice")
        }

        @Test func dataWithLimitAllReturnsEveryItemsDataAsOnIOS() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "1")
            addPassword(account: "b", secret: "2")
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true,
                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect(status == errSecSuccess)
            let items = try #require(result as? [[String: Any]])
            #expect(Set(items.compactMap { $0[kSecValueData as String] as? Data }) == [Data("1".utf8), Data("2".utf8)])
        }

        @Test func noReturnKeyGivesSuccessAndNoResult() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "alice")
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "alice",
            ])
            #expect(status == errSecSuccess)
            #expect(result == nil)
        }

        @Test func addReturnsNothingUnlessAsked() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var result: CFTypeRef?
            #expect(
                SecItemAdd(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a"] as CFDictionary,
                    &result) == errSecSuccess)
            #expect(result == nil)
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "b",
                        kSecReturnPersistentRef as String: true,
                    ] as CFDictionary, &result) == errSecSuccess)
            #expect(result is Data)
        }

        @Test func aPersistentReferenceFindsExactlyItsItem() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "1")
            addPassword(account: "b", secret: "2")
            let reference = try #require(persistentReference(account: "b"))
            let (status, data) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference,
                kSecReturnData as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect(data as? Data == Data("2".utf8))
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference]
                        as CFDictionary) == errSecSuccess)
            #expect(
                copyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a"]).0
                    == errSecSuccess)
            #expect(
                copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: Data("junk".utf8),
                ]).0 == errSecParam)
        }

        /// As on iOS, a persistent reference names its item's class: no kSecClass is needed.
        /// A persistent reference names one item whatever its synchronizable flag, as on iOS;
        /// kSecAttrSynchronizable beside it still narrows the match.
        @Test func aSynchronizableItemIsFoundByItsPersistentReference() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var added: CFTypeRef?
            let attributes: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "synced",
                kSecAttrSynchronizable as String: true, kSecValueData as String: Data("s".utf8),
                kSecReturnPersistentRef as String: true,
            ]
            #expect(SecItemAdd(attributes as CFDictionary, &added) == errSecSuccess)
            let reference = try #require(added as? Data)
            let byReference: [String: Any] = [
                kSecValuePersistentRef as String: reference, kSecReturnData as String: true,
            ]
            #expect(copyMatching(byReference).1 as? Data == Data("s".utf8))
            let notSynchronizable = byReference.merging([kSecAttrSynchronizable as String: false]) { $1 }
            #expect(copyMatching(notSynchronizable).0 == errSecItemNotFound)
        }

        @Test func aPersistentReferenceAloneFindsUpdatesAndDeletesItsItem() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "1")
            let reference = try #require(persistentReference(account: "a"))
            let byReference: [String: Any] = [kSecValuePersistentRef as String: reference]
            #expect(
                copyMatching(byReference.merging([kSecReturnData as String: true]) { $1 }).1 as? Data == Data("1".utf8))
            #expect(
                SecItemUpdate(byReference as CFDictionary, [kSecValueData as String: Data("2".utf8)] as CFDictionary)
                    == errSecSuccess)
            #expect(
                copyMatching(byReference.merging([kSecReturnData as String: true]) { $1 }).1 as? Data == Data("2".utf8))
            #expect(SecItemDelete(byReference as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(byReference as CFDictionary) == errSecItemNotFound)
            #expect(SecItemDelete([kSecValuePersistentRef as String: Data("junk".utf8)] as CFDictionary) == errSecParam)
        }

        /// kSecReturnRef beside another return key of a password: the others come back, in a
        /// dictionary, as on iOS; alone it is not supported (a password has no object), while a
        /// key's is its `SecKey` (``SecKeyItemTests``).
        @Test func aReferenceAskedForBesideDataReturnsTheData() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a", secret: "1")
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                kSecReturnRef as String: true,
            ]
            let (status, result) = copyMatching(query.merging([kSecReturnData as String: true]) { $1 })
            #expect(status == errSecSuccess)
            #expect((result as? [String: Any])?[kSecValueData as String] as? Data == Data("1".utf8))
            let attributes =
                copyMatching(query.merging([kSecReturnAttributes as String: true]) { $1 }).1 as? [String: Any]
            #expect(attributes?[kSecAttrAccount as String] as? String == "a")
            #expect(copyMatching(query).0 == errSecUnimplemented)
            #expect(
                copyMatching([
                    kSecClass as String: kSecClassKey, kSecReturnRef as String: true, kSecReturnData as String: true,
                ]).0 == errSecItemNotFound)
        }

        /// A wrapper's delete often keeps the access control it added with: accepted, and it
        /// does not narrow the match; anything but a SecAccessControl is errSecParam.
        @Test func aListOfPersistentReferencesLimitsTheMatchUpdateAndDelete() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            var references: [String: Data] = [:]
            for account in ["a", "b", "c"] {
                var added: CFTypeRef?
                let status = SecItemAdd(
                    [
                        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc",
                        kSecAttrAccount: account as NSString,
                        kSecValueData: Data(account.utf8), kSecReturnPersistentRef: true,
                    ] as NSDictionary, &added)
                #expect(status == errSecSuccess)
                references[account] = added as? Data
            }
            func accounts(_ list: [Data]) -> [String] {
                let (_, result) = copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecMatchItemList as String: list,
                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                ])
                return ((result as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String }
                    .sorted()
            }
            let a = try #require(references["a"]), b = try #require(references["b"]), c = try #require(references["c"])
            #expect(accounts([a, c]) == ["a", "c"])
            #expect(accounts([]).isEmpty)
            // The list narrows the other terms, and they narrow it.
            let (narrowed, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecMatchItemList as String: [a, c],
                kSecAttrAccount as String: "b",
            ])
            #expect(narrowed == errSecItemNotFound)
            let update = SecItemUpdate(
                [kSecClass: kSecClassGenericPassword, kSecMatchItemList: [b, c]] as NSDictionary,
                [kSecAttrLabel: "listed"] as NSDictionary)
            #expect(update == errSecSuccess)
            let (_, labelled) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrLabel as String: "listed",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            ])
            #expect(
                ((labelled as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
                    == ["b", "c"])
            #expect(
                SecItemDelete([kSecClass: kSecClassGenericPassword, kSecMatchItemList: [b]] as NSDictionary)
                    == errSecSuccess)
            #expect(accounts([a, b, c]) == ["a", "c"])
            // What the list may not hold.
            #expect(
                copyMatching([kSecClass as String: kSecClassGenericPassword, kSecMatchItemList as String: "a"]).0
                    == errSecParam)
            #expect(
                copyMatching([kSecClass as String: kSecClassInternetPassword, kSecMatchItemList as String: [a]]).0
                    == errSecParam)
            #expect(addPassword(account: "d", extra: [kSecMatchItemList as String: [a]]) == errSecParam)
        }

        @Test func anAccessControlInAQueryIsAccepted() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "a")
            var error: Unmanaged<CFError>?
            let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], &error))
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrAccessControl as String: "x"]
                        as CFDictionary) == errSecParam)
            #expect(
                SecItemDelete(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                        kSecAttrAccessControl as String: access,
                    ] as CFDictionary) == errSecSuccess)
        }
    }
}
