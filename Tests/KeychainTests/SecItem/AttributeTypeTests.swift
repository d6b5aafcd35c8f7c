import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    /// Apple's attribute types (SecItemSchema.c): a Blob keeps a string, data or number as given;
    /// a Number takes numbers, booleans and strings as iOS's `copyNumber` does.
    @Suite struct AttributeTypeTests {
        private static let accountBytes = Data("user@example.com".utf8)

        private func addDataKeyedPassword(_ account: Data, service: Data = Data("com.example.wrapper".utf8)) -> OSStatus
        {
            SecItemAdd(
                [
                    kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: account,
                    kSecValueData: Data("token".utf8),
                ] as NSDictionary, nil)
        }

        @Test func anAccountAndServiceGivenAsDataAreStoredFoundAndReturnedAsData() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addDataKeyedPassword(Self.accountBytes) == errSecSuccess)
            var result: AnyObject?
            let status = SecItemCopyMatching([
                kSecClass: kSecClassGenericPassword, kSecAttrService: Data("com.example.wrapper".utf8),
                kSecAttrAccount: Self.accountBytes, kSecReturnAttributes: kCFBooleanTrue!, kSecReturnData: true,
            ] as NSDictionary, &result)
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrAccount as String] as? Data == Self.accountBytes)
            #expect(attributes[kSecAttrService as String] as? Data == Data("com.example.wrapper".utf8))
            #expect(attributes[kSecValueData as String] as? Data == Data("token".utf8))
            // As wrappers read it: an [AnyHashable: Any] looked up with the constant itself.
            let byConstant = try #require(result as? [AnyHashable: Any])
            #expect(byConstant[kSecAttrAccount] as? Data == Self.accountBytes)
        }

        @Test func aDataAccountIsADifferentValueFromTheSameTextAsAString() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addDataKeyedPassword(Self.accountBytes, service: Data("svc".utf8)) == errSecSuccess)
            #expect(addDataKeyedPassword(Self.accountBytes, service: Data("svc".utf8)) == errSecDuplicateItem)
            let (asString, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "user@example.com",
            ])
            #expect(asString == errSecItemNotFound)
            // The text as a string is a separate item, as on iOS (the primary key keeps the type).
            #expect(addPassword(service: "svc", account: "user@example.com") == errSecSuccess)
            let (all, found) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnAttributes as String: true,
            ])
            #expect(all == errSecSuccess)
            #expect((found as? [[String: Any]])?.count == 2)
        }

        @Test func theBlobAttributesTakeDataAndNumbersToo() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let status = SecItemAdd(
                [
                    kSecClass: kSecClassInternetPassword, kSecAttrServer: Data("example.com".utf8),
                    kSecAttrPath: Data("/".utf8),
                    kSecAttrAccount: "alice", kSecAttrLabel: Data("label".utf8), kSecAttrComment: 7,
                    kSecAttrDescription: "d",
                    kSecValueData: Data("pw".utf8),
                ] as NSDictionary, nil)
            #expect(status == errSecSuccess)
            let (found, result) = copyMatching([
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: Data("example.com".utf8),
                kSecAttrComment as String: 7, kSecReturnAttributes as String: true,
            ])
            #expect(found == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrLabel as String] as? Data == Data("label".utf8))
            #expect((attributes[kSecAttrComment as String] as? NSNumber)?.intValue == 7)
            #expect(attributes[kSecAttrDescription as String] as? String == "d")
        }

        @Test func theGenericAttributeTakesAStringAsWellAsData() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "a", extra: [kSecAttrGeneric as String: "opaque"]) == errSecSuccess)
            #expect(addPassword(account: "b", extra: [kSecAttrGeneric as String: Data([1, 2])]) == errSecSuccess)
            let (found, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrGeneric as String: "opaque",
                kSecReturnAttributes as String: true,
            ])
            #expect(found == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "a")
        }

        @Test func creatorAndTypeTakeFourCharacterCodesAsNumbersOrStringsAndBooleans() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let aapl = NSNumber(value: 0x6161_706C as UInt32)
            #expect(
                addPassword(account: "number", extra: [kSecAttrCreator as String: aapl, kSecAttrType as String: true])
                    == errSecSuccess)
            #expect(
                addPassword(account: "text", extra: [kSecAttrCreator as String: "aapl", kSecAttrType as String: "42"])
                    == errSecSuccess)
            #expect(addPassword(account: "padded", extra: [kSecAttrType as String: "007"]) == errSecSuccess)

            func attributes(_ account: String) throws -> [String: Any] {
                let (status, result) = copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account,
                    kSecReturnAttributes as String: true,
                ])
                #expect(status == errSecSuccess)
                return try #require(result as? [String: Any])
            }
            let number = try attributes("number")
            #expect((number[kSecAttrCreator as String] as? NSNumber)?.int64Value == 0x6161_706C)
            #expect((number[kSecAttrType as String] as? NSNumber)?.intValue == 1)
            let text = try attributes("text")
            // A string that is not a number is kept as the string; one that is becomes the number.
            #expect(text[kSecAttrCreator as String] as? String == "aapl")
            #expect((text[kSecAttrType as String] as? NSNumber)?.intValue == 42)
            #expect(try attributes("padded")[kSecAttrType as String] as? String == "007")
            let (byNumber, found) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrType as String: 42,
                kSecReturnAttributes as String: true,
            ])
            #expect(byNumber == errSecSuccess)
            #expect((found as? [String: Any])?[kSecAttrAccount as String] as? String == "text")
        }

        @Test func aConstantInAnAnyHashableEqualsItsString() {
            #expect(AnyHashable(kSecAttrAccount) == AnyHashable("acct"))
            #expect(AnyHashable(kSecAttrAccount).hashValue == AnyHashable("acct").hashValue)
            let attributes: [AnyHashable: Any] = ["acct": "alice", kSecAttrService: "svc"]
            #expect(attributes[kSecAttrAccount] as? String == "alice")
            #expect(attributes["svce"] as? String == "svc")
        }

        @Test func aTypeNoConversionTakesIsStillRefusedWithErrSecParam() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(addPassword(account: "a", extra: [kSecAttrService as String: Date()]) == errSecParam)
            #expect(addPassword(account: "a", extra: [kSecAttrCreator as String: Data([1])]) == errSecParam)
            #expect(addPassword(account: "a", extra: [kSecAttrIsInvisible as String: "yes"]) == errSecParam)
            let (status, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: [1, 2],
            ])
            #expect(status == errSecParam)
        }
    }
}
