import Foundation
import Keychain
import Testing

func accessControl(
    _ flags: SecAccessControlCreateFlags, _ protection: CFString = kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
) -> SecAccessControl? {
    var error: Unmanaged<CFError>?
    return SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, &error)
}

/// Adds the KeychainTouchID sample's item: "SampleService", protected by `flags`.
@discardableResult
func addProtected(
    _ flags: SecAccessControlCreateFlags, account: String = "sample", secret: String = "SECRET_PASSWORD_TEXT",
    context: LAContext? = nil
) -> OSStatus {
    var attributes: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService",
        kSecAttrAccount as String: account, kSecValueData as String: Data(secret.utf8),
        kSecUseNoAuthenticationUI as String: true, kSecAttrAccessControl as String: accessControl(flags) as Any,
    ]
    if let context { attributes[kSecUseAuthenticationContext as String] = context }
    return SecItemAdd(attributes as CFDictionary, nil)
}

func readProtected(_ context: LAContext?, account: String = "sample", extra: [String: Any] = [:]) -> (OSStatus, String?)
{
    var query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService",
        kSecAttrAccount as String: account, kSecReturnData as String: true,
        kSecUseOperationPrompt as String: "Authenticate to access service password",
    ]
    if let context { query[kSecUseAuthenticationContext as String] = context }
    query.merge(extra) { $1 }
    let (status, result) = copyMatching(query)
    return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
}

extension SecItemAPITests {
    @Suite struct SecAccessControlTests {
        @Test func validCombinationsAreAccepted() {
            for flags: SecAccessControlCreateFlags in [
                .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode,
                [.biometryAny, .or, .devicePasscode], [.biometryCurrentSet, .and, .devicePasscode],
                // Apple: several constraints without .or must all be met; .or with one changes nothing.
                [.biometryAny, .devicePasscode], [.biometryAny, .or],
                [.userPresence, .applicationPassword, .privateKeyUsage],
                [.biometryAny, .applicationPassword], [.privateKeyUsage], [.applicationPassword], [],
            ] {
                #expect(accessControl(flags) != nil, "\(flags)")
            }
            #expect(
                SecAccessControlCreateFlags.userPresence.rawValue == 1
                    && SecAccessControlCreateFlags.biometryAny.rawValue == 2)
            #expect(
                SecAccessControlCreateFlags.biometryCurrentSet.rawValue == 8
                    && SecAccessControlCreateFlags.devicePasscode.rawValue == 16)
            #expect(
                SecAccessControlCreateFlags.or.rawValue == 1 << 14
                    && SecAccessControlCreateFlags.and.rawValue == 1 << 15)
            #expect(
                SecAccessControlCreateFlags.privateKeyUsage.rawValue == 1 << 30
                    && SecAccessControlCreateFlags.applicationPassword.rawValue == 1 << 31)
            // CFOptionFlags, so that `SecAccessControlCreateFlags(rawValue: someUInt)` compiles as on iOS.
            #expect(SecAccessControlCreateFlags.RawValue.self == CFOptionFlags.self)
        }

        @Test func invalidCombinationsAreRefusedWithErrSecParam() {
            // Apple's refusals (Security's SecAccessControl.c), then Linux's: no companion devices, no unknown bits.
            for flags: SecAccessControlCreateFlags in [
                [.biometryAny, .or, .and, .devicePasscode], [.biometryAny, .biometryCurrentSet, .or],
                [.userPresence, .or, .devicePasscode], [.userPresence, .devicePasscode], [.userPresence, .and],
                [.watch], SecAccessControlCreateFlags(rawValue: 1 << 20),
            ] {
                var error: Unmanaged<CFError>?
                #expect(
                    SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, flags, &error)
                        == nil)
                #expect(error?.takeRetainedValue().code == Int(errSecParam), "\(flags)")
            }
            var error: Unmanaged<CFError>?
            #expect(SecAccessControlCreateWithFlags(nil, "nope" as CFString, .userPresence, &error) == nil)
        }
    }

    @Suite struct AccessControlledItemTests {
        /// iOS 11.3 and later report an access control for every item: one added without one
        /// has its accessibility alone. Written back with the attributes it came with, the item
        /// is the same (synchronizable included); an accessibility that disagrees is refused.
        @Test func everyItemReportsAnAccessControlThatWritesBack() throws {
            let keychain = try TestKeychain.make().install()
            defer { keychain.remove() }
            addPassword(account: "plain", extra: [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock])
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "plain",
                kSecReturnAttributes as String: true,
            ]
            let found = try #require(copyMatching(query).1 as? [String: Any])
            let reported = try #require(found[kSecAttrAccessControl as String] as? SecAccessControl)
            #expect(reported == accessControl([], kSecAttrAccessibleAfterFirstUnlock))
            // The protection as read, written back for another, synchronizable, item.
            var attributes: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "copy",
                kSecAttrSynchronizable as String: true, kSecValueData as String: Data("s".utf8),
            ]
            for key in [kSecAttrAccessible as String, kSecAttrAccessControl as String] { attributes[key] = found[key] }
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
            attributes[kSecAttrAccount as String] = "disagrees"
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecParam)
        }

        @Test func anAccessControlCannotComeWithAccessibleOrSync() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            var attributes: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "a",
                kSecAttrAccessControl as String: accessControl(.userPresence) as Any,
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
            ]
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecParam)
            attributes[kSecAttrAccessible as String] = nil
            attributes[kSecAttrSynchronizable as String] = true
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecParam)
        }

        @Test func aClientThatSkipsThePromptGetsNoSecret() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            #expect(addProtected(.userPresence) == errSecSuccess)
            // Through the API without a prompt…
            #expect(
                readProtected(nil, extra: [kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]).0
                    == errSecInteractionNotAllowed)
            // No terminal here: a fresh context cannot prompt.
            #expect(readProtected(nil).0 == errSecInteractionNotAllowed)
            // …and straight to the server: with no context, with a context that never
            // authenticated, and naming a context that authenticated on another connection.
            var query = ItemQuery(
                itemClass: .genericPassword, attributes: ["svce": .string("SampleService")], returns: .data)
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { try keychain.perform(.copyMatching(query)) }
            query.authenticationContext = .random()
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { try keychain.perform(.copyMatching(query)) }
            let owners = AuthenticationContextID.random()
            _ = try keychain.perform(.verifyPasscode(SecretBytes(utf8: "1234"), context: owners), connection: 1)
            query.authenticationContext = owners
            #expect(throws: KeychainError.errSecInteractionNotAllowed) {
                try keychain.perform(.copyMatching(query), connection: 2)
            }
            guard case .items(let items) = try keychain.perform(.copyMatching(query), connection: 1) else {
                throw KeychainError.errSecInternalComponent
            }
            #expect(items.first?.secret?.copyData() == Data("SECRET_PASSWORD_TEXT".utf8))
            // Lock forgets what every context earned.
            try keychain.lock()
            try keychain.unlock("1234")
            #expect(throws: KeychainError.errSecInteractionNotAllowed) {
                try keychain.perform(.copyMatching(query), connection: 1)
            }
            // Attributes and existence need no authentication.
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessControl as String] is SecAccessControl)
        }

        @Test func aMatchingTouchReleasesTheSecretAndTheContextIsReused() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence, account: "one", secret: "1")
            addProtected(.userPresence, account: "two", secret: "2")
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            #expect(readProtected(context, account: "one") == (errSecSuccess, "1"))
            #expect(readProtected(context, account: "two") == (errSecSuccess, "2"))
            #expect(readProtected(context, account: "one") == (errSecSuccess, "1"))
            #expect(prompt.sheets.withLock { $0.count } == 1)
            #expect(prompt.sheets.withLock { $0.first?.reason } == "Authenticate to access service password")
            context.invalidate()
            #expect(readProtected(context, account: "one").0 == errSecAuthFailed)
        }

        @Test func withoutAnOperationPromptTheContextsReasonIsShown() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence)
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let context = LAContext.scripted(prompt)
            context.localizedReason = "To read your chores token"
            let (status, _) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true,
                kSecUseAuthenticationContext as String: context,
            ])
            #expect(status == errSecSuccess)
            #expect(prompt.sheets.withLock { $0.first?.reason } == "To read your chores token")
        }

        @Test func aQueryMatchingSeveralItemsAuthenticatesOnce() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence, account: "one", secret: "1")
            addProtected(.biometryAny, account: "two", secret: "2")
            let prompt = ScriptedPrompt([.touch(matching: true)])
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
                kSecUseAuthenticationContext as String: LAContext.scripted(prompt),
            ])
            #expect(status == errSecSuccess)
            #expect((result as? [Data])?.count == 2)
            #expect(prompt.sheets.withLock { $0.count } == 1)
        }

        @Test func uiSkipLeavesProtectedItemsOut() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence, account: "protected")
            addPassword(service: "SampleService", account: "plain", secret: "open")
            let (status, result) = copyMatching([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService",
                kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip,
            ])
            #expect(status == errSecSuccess)
            #expect((result as? [Data]) == [Data("open".utf8)])
            #expect(
                readProtected(
                    nil, account: "protected", extra: [kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip]
                ).0 == errSecItemNotFound)
        }

        @Test func outcomesMapToApplesCodes() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.biometryAny)
            let miss = ScriptedPrompt.Step.touch(matching: false)
            #expect(readProtected(LAContext.scripted(ScriptedPrompt([.press(.cancel)]))).0 == errSecUserCanceled)
            #expect(readProtected(LAContext.scripted(ScriptedPrompt([miss, miss, miss]))).0 == errSecAuthFailed)
            let context = LAContext.scripted(ScriptedPrompt([]))
            context.interactionNotAllowed = true
            #expect(readProtected(context).0 == errSecInteractionNotAllowed)
        }

        @Test func devicePasscodeItemsAskForThePasscode() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.devicePasscode)
            let prompt = ScriptedPrompt([.passcode("1234")])
            #expect(readProtected(LAContext.scripted(prompt)) == (errSecSuccess, "SECRET_PASSWORD_TEXT"))
            #expect(prompt.sheets.withLock { $0.map(\.asksForTouch) } == [false])
        }

        /// With `.and`, and (as on iOS) with no conjunction at all.
        @Test(
            arguments: [[.biometryAny, .and, .devicePasscode], [.biometryAny, .devicePasscode]]
                as [SecAccessControlCreateFlags])
        func biometryAndPasscodeNeedsBoth(flags: SecAccessControlCreateFlags) throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(flags)
            let prompt = ScriptedPrompt([.touch(matching: true), .passcode("1234")])
            #expect(readProtected(LAContext.scripted(prompt)) == (errSecSuccess, "SECRET_PASSWORD_TEXT"))
            #expect(prompt.sheets.withLock { $0.map(\.asksForTouch) } == [true, false])
        }

        @Test func aCurrentSetItemDiesWhenTheEnrolledSetChangesAndAnAnyItemDoesNot() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.biometryCurrentSet, account: "current")
            addProtected(.biometryAny, account: "any")
            #expect(
                readProtected(LAContext.scripted(ScriptedPrompt([.touch(matching: true)])), account: "current").0
                    == errSecSuccess)
            _ = try keychain.perform(.enrollFinger(name: "index", passcode: SecretBytes(utf8: "1234")))
            let prompt = ScriptedPrompt([.touch(matching: true)])
            #expect(readProtected(LAContext.scripted(prompt), account: "current").0 == errSecAuthFailed)
            #expect(prompt.sheets.withLock { $0.isEmpty })
            #expect(
                readProtected(LAContext.scripted(ScriptedPrompt([.touch(matching: true)])), account: "any").0
                    == errSecSuccess)
        }

        @Test func anApplicationPasswordIsNeededAndChecked() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            let creator = LAContext.scripted(ScriptedPrompt([]))
            creator.setCredential(Data("app-secret".utf8), type: .applicationPassword)
            #expect(addProtected(.applicationPassword) == errSecInteractionNotAllowed)
            #expect(addProtected(.applicationPassword, context: creator) == errSecSuccess)
            let wrong = LAContext.scripted(ScriptedPrompt([]))
            wrong.setCredential(Data("guess".utf8), type: .applicationPassword)
            #expect(readProtected(wrong).0 == errSecAuthFailed)
            #expect(readProtected(LAContext.scripted(ScriptedPrompt([]))).0 == errSecInteractionNotAllowed)
            #expect(readProtected(creator) == (errSecSuccess, "SECRET_PASSWORD_TEXT"))
        }

        /// An update to an access control without constraints removes the item's constraints,
        /// as on iOS; its accessibility becomes the control's protection.
        @Test func anUpdateToAnAccessControlWithoutConstraintsRemovesThem() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence)
            #expect(readProtected(nil).0 == errSecInteractionNotAllowed)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService",
                kSecUseAuthenticationContext as String: LAContext.scripted(ScriptedPrompt([.touch(matching: true)])),
            ]
            let alone = [kSecAttrAccessControl as String: accessControl([], kSecAttrAccessibleAfterFirstUnlock) as Any]
            #expect(SecItemUpdate(query as CFDictionary, alone as CFDictionary) == errSecSuccess)
            #expect(readProtected(nil) == (errSecSuccess, "SECRET_PASSWORD_TEXT"))
            let attributes = try #require(
                copyMatching([
                    kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                ]).1 as? [String: Any])
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
        }

        @Test func updatingNeedsAuthenticationAndDeletingDoesNot() throws {
            let keychain = try biometricKeychain()
            defer { keychain.remove() }
            addProtected(.userPresence)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService",
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail,
            ]
            let update = [kSecValueData as String: Data("UPDATED_SECRET_PASSWORD_TEXT".utf8)]
            #expect(SecItemUpdate(query as CFDictionary, update as CFDictionary) == errSecInteractionNotAllowed)
            let context = LAContext.scripted(ScriptedPrompt([.touch(matching: true)]))
            var allowed = query
            allowed[kSecUseAuthenticationUI as String] = nil
            allowed[kSecUseAuthenticationContext as String] = context
            allowed[kSecUseOperationPrompt as String] = "Authenticate to update your password"
            #expect(SecItemUpdate(allowed as CFDictionary, update as CFDictionary) == errSecSuccess)
            #expect(readProtected(context) == (errSecSuccess, "UPDATED_SECRET_PASSWORD_TEXT"))
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "SampleService"]
                        as CFDictionary) == errSecSuccess)
        }
    }
}
