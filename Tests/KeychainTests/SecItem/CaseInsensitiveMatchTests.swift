import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    /// `kSecMatchCaseInsensitive`: string attributes match whatever their case; everything else
    /// (data, numbers, the access group) still matches exactly.
    @Suite struct CaseInsensitiveMatchTests {
        private func accounts(_ query: [String: Any]) -> [String] {
            var all = query
            all[kSecClass as String] = kSecClassGenericPassword
            all[kSecMatchLimit as String] = kSecMatchLimitAll
            all[kSecReturnAttributes as String] = true
            let (_, result) = copyMatching(all)
            return ((result as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
        }

        @Test func aStringMatchesWhateverItsCaseOnlyWhenAsked() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(service: "Mail", account: "Alice@Example.com") == errSecSuccess)
            let exact = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                kSecAttrAccount as String: "alice@example.com",
            ])
            #expect(exact.0 == errSecItemNotFound)
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "MAIL",
                kSecAttrAccount as String: "alice@example.COM",
                kSecMatchCaseInsensitive as String: kCFBooleanTrue!, kSecReturnData as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("s3cr3t".utf8))
            #expect(
                accounts([kSecAttrAccount as String: "ALICE@EXAMPLE.COM", kSecMatchCaseInsensitive as String: false])
                    .isEmpty)
        }

        @Test func everyMatchIsFoundAndTheLimitCountsMatchesNotRows() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["bob", "BOB", "Bob", "carol"] { #expect(addPassword(account: account) == errSecSuccess) }
            #expect(
                accounts([kSecAttrAccount as String: "bOb", kSecMatchCaseInsensitive as String: true]) == [
                    "BOB", "Bob", "bob",
                ])
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "CAROL",
                kSecMatchCaseInsensitive as String: true,
                kSecMatchLimit as String: 1, kSecReturnAttributes as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "carol")
        }

        @Test func dataAndNumbersStillMatchExactly() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(
                addPassword(
                    account: "a", extra: [kSecAttrGeneric as String: Data("Tag".utf8), kSecAttrType as String: 5])
                    == errSecSuccess)
            #expect(
                accounts([kSecAttrGeneric as String: Data("tag".utf8), kSecMatchCaseInsensitive as String: true])
                    .isEmpty)
            #expect(
                accounts([
                    kSecAttrGeneric as String: Data("Tag".utf8), kSecAttrType as String: 5,
                    kSecMatchCaseInsensitive as String: true,
                ]) == ["a"])
            #expect(
                accounts([
                    kSecAttrType as String: 6, kSecAttrAccount as String: "A", kSecMatchCaseInsensitive as String: true,
                ]).isEmpty)
        }

        @Test func updateAndDeleteActOnEveryCaseAndNothingElse() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            for account in ["dave", "DAVE", "erin"] { #expect(addPassword(account: account) == errSecSuccess) }
            let update = SecItemUpdate(
                [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "Dave",
                    kSecMatchCaseInsensitive as String: true,
                ] as CFDictionary,
                [kSecAttrLabel as String: "updated"] as CFDictionary)
            #expect(update == errSecSuccess)
            #expect(accounts([kSecAttrLabel as String: "updated"]) == ["DAVE", "dave"])
            let delete = SecItemDelete(
                [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "dAVE",
                    kSecMatchCaseInsensitive as String: true,
                ] as CFDictionary)
            #expect(delete == errSecSuccess)
            #expect(accounts([:]) == ["erin"])
        }

        @Test func itIsASearchKeyAndDoesNotBelongInAnAdd() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "a", extra: [kSecMatchCaseInsensitive as String: true]) == errSecParam)
            let (status, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecMatchCaseInsensitive as String: "yes",
            ])
            #expect(status == errSecParam)
        }
    }
}
