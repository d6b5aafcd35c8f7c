import Foundation
import Keychain
import Testing

extension SecItemAPITests {
    @Suite struct FacadeTests {
        @Test func setGetRemoveAndSubscripts() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let chores = Keychain(service: "com.example.chores")
            try chores.set("hunter2", key: "token")
            #expect(try chores.get("token") == "hunter2")
            #expect(try chores.contains("token"))
            chores["token"] = "changed"
            #expect(chores["token"] == "changed")
            chores[data: "blob"] = Data([0, 1, 2])
            #expect(chores[data: "blob"] == Data([0, 1, 2]))
            #expect(try chores.allKeys() == ["blob", "token"])
            chores["token"] = nil
            #expect(try chores.contains("token") == false)
            #expect(try chores.get("token") == nil)
            try chores.removeAll()
            #expect(try chores.allKeys().isEmpty)
        }

        @Test func fluentSettingsReachTheItem() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            try Keychain(service: "svc").accessibility(.afterFirstUnlockThisDeviceOnly).label("L").comment("C").set(
                "v", key: "k")
            let (_, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "k",
                kSecReturnAttributes as String: true,
            ])
            let attributes = try #require(result as? [String: Any])
            #expect(
                attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                    as String)
            #expect(attributes[kSecAttrLabel as String] as? String == "L")
            #expect(attributes[kSecAttrComment as String] as? String == "C")
        }

        @Test func servicesAreSeparate() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            try Keychain(service: "one").set("1", key: "k")
            try Keychain(service: "two").set("2", key: "k")
            #expect(try Keychain(service: "one").get("k") == "1")
            try Keychain(service: "one").removeAll()
            #expect(try Keychain(service: "two").get("k") == "2")
        }

        @Test func protectedValuesNeedTheOwnerAndAContextServesSeveralReads() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let secure = Keychain(service: "com.example.chores")
                .accessibility(.whenPasscodeSetThisDeviceOnly, authenticationPolicy: .userPresence)
                .authenticationPrompt("To read the sync token")
            try secure.set("token", key: "sync")
            #expect(throws: KeychainError.errSecInteractionNotAllowed) {
                try secure.authenticationUI(.fail).get("sync")
            }
            #expect(try secure.authenticationUI(.skip).get("sync") == nil)
            #expect(try secure.contains("sync"))
            let reading = secure.authenticationContext(LAContext.scripted(prompt))
            #expect(try reading.get("sync") == "token")
            #expect(try reading.get("sync") == "token")
            #expect(prompt.sheets.withLock { $0.map(\.reason) } == ["To read the sync token"])
        }

        @Test func valuesOver16KiBAreRefused() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            #expect(throws: KeychainError.errSecDataTooLarge) {
                try Keychain(service: "svc").set(Data(count: KeychainLimits.maximumSecretSize + 1), key: "big")
            }
        }
    }

    @Suite struct ErrorMessageTests {
        @Test func messagesNameTheProblemAndNeverAValueOrSecret() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            let secretValue = "very-secret-value-123"
            let account = "private-account-name"
            try Keychain(service: "private-service-name").set(secretValue, key: account)
            var errors: [KeychainError] = []
            func capture(_ body: () throws -> Void) {
                do { try body() } catch let error as KeychainError { errors.append(error) } catch {}
            }
            capture {
                _ = try ProcessKeychain.perform(
                    .add(
                        NewItem(
                            itemClass: .genericPassword,
                            attributes: ["svce": .string("private-service-name"), "acct": .string(account)],
                            secret: SecretBytes(utf8: secretValue))))
            }
            capture {
                _ = try ProcessKeychain.perform(
                    .copyMatching(
                        ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("missing-\(account)")])))
            }
            capture { _ = try ProcessKeychain.perform(.setPasscode(current: nil, new: SecretBytes(utf8: "12"))) }
            try keychain.setPasscode("4321")
            capture { _ = try ProcessKeychain.perform(.unlock(passcode: SecretBytes(utf8: "9999"))) }
            #expect(errors.map(\.status) == [errSecDuplicateItem, errSecItemNotFound, errSecParam, errSecAuthFailed])
            for error in errors {
                for value in [secretValue, account, "private-service-name", "9999", "4321"] {
                    #expect(!error.description.contains(value), "\(error) leaks \(value)")
                }
            }
            #expect(
                errors[0].description
                    == "errSecDuplicateItem (-25299): an item with the same primary key already exists")
            #expect(
                errors[1].description
                    == "errSecItemNotFound (-25300): no generic password with that account that this program can see")
        }

        @Test func everyCodeHasApplesName() {
            for error in KeychainError.known {
                #expect(KeychainError.name(of: error.status).hasPrefix("errSec"))
                #expect(SecCopyErrorMessageString(error.status, nil) as String? == error.message)
            }
            #expect(SecCopyErrorMessageString(errSecSuccess, nil) == "No error.")
            #expect(
                Set(KeychainError.known.map { KeychainError.name(of: $0.status) }).count == KeychainError.known.count,
                "one name per code")
            #expect(KeychainError.name(of: errSecSuccess) == "errSecSuccess")
            #expect(KeychainError.name(of: errSecItemNotFound) == "errSecItemNotFound")
            #expect(KeychainError.name(of: errSecVerifyFailed) == "errSecVerifyFailed")
            #expect(KeychainError.name(of: 12345) == "OSStatus 12345")
        }
    }
}
