// Runs the corpus against the keychain this process reaches (the end-to-end test gives it a
// keychaind of its own) and prints one line per check: "ok NAME" or "FAIL NAME: …".
// Exits 1 when a check fails.
import Foundation
import Security

@main
enum CorpusRun {
    static func main() {
        var failures = 0
        func check(_ name: String, _ passed: Bool, _ detail: @autoclosure () -> String = "") {
            print(passed ? "ok \(name)" : "FAIL \(name): \(detail())")
            if !passed { failures += 1 }
        }

        // Run as an app declared with an application group (`--app-group GROUP`): that group is one
        // of its access groups, as on iOS.
        let arguments = CommandLine.arguments
        if let flag = arguments.firstIndex(of: "--app-group"), flag + 1 < arguments.count {
            let group = arguments[flag + 1]
            let shared = Data("for the widget".utf8)
            check(
                "an item shared through an application group",
                AppGroupStore.share(shared, account: "token", group: group) == errSecSuccess
                    && AppGroupStore.read(account: "token", group: group) == shared)
            exit(failures == 0 ? 0 : 1)
        }

        // First, while the keychain has never been written: the entitlement comes first.
        let foreignGroup: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: "com.example.not-entitled",
        ]
        check(
            "a delete in a group not entitled to, before any write",
            SecItemDelete(foreignGroup as CFDictionary) == errSecMissingEntitlement)

        let store = PasswordStore(service: "com.example.corpus")
        check("set a string", store.set("hunter2", forKey: "token"))
        check(
            "read it back as Data from AnyObject?", store.string(forKey: "token") == "hunter2",
            "\(String(describing: store.string(forKey: "token")))")
        check("set again updates", store.set("second", forKey: "token") && store.string(forKey: "token") == "second")
        let attributes = store.attributes(forKey: "token") ?? [:]
        check(
            "attributes as [String: Any]",
            attributes[kSecAttrAccount as String] as? String == "token"
                && attributes[kSecAttrService as String] as? String == "com.example.corpus", "\(attributes)")
        check(
            "class reported as kSecClassGenericPassword",
            attributes[kSecClass as String] as? String == kSecClassGenericPassword as String, "\(attributes)")
        check(
            "accessibility reported as the constant",
            attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String,
            "\(attributes)")
        check("dates as Date", attributes[kSecAttrCreationDate as String] is Date, "\(attributes)")
        check(
            "an access control reported for an item added without one",
            attributes[kSecAttrAccessControl as String] is SecAccessControl, "\(attributes)")
        check(
            "access group reported as agrp", !(attributes[kSecAttrAccessGroup as String] as? String ?? "").isEmpty,
            "\(attributes)")
        store.set(Data("1".utf8), forKey: "a")
        store.set(Data("2".utf8), forKey: "b")
        check("all keys from [[String: Any]]", store.allKeys() == ["a", "b", "token"], "\(store.allKeys())")
        check(
            "NSMutableDictionary query with kCFBooleanTrue",
            OtherIdioms.mutableDictionaryLookup(service: "com.example.corpus", account: "a") == "1")
        check("remove", store.removeObject(forKey: "token") && store.data(forKey: "token") == nil)
        check(
            "optional-key delete",
            OtherIdioms.optionalKeyDelete(service: "com.example.corpus") == errSecSuccess && store.allKeys().isEmpty,
            "\(store.allKeys())")

        let protected = OtherIdioms.protectedItemQuery()
        check("access control in [String: AnyHashable]", protected != nil)
        if let protected = protected {
            let status = SecItemAdd(protected as CFDictionary, nil)
            // No passcode is set in this keychain: such an item cannot be stored (as on iOS).
            check("a WhenPasscodeSet item without a passcode", status == errSecNotAvailable, "status \(status)")
        }
        if let refused = OtherIdioms.refusedAccessControl() {
            check("refused access control: code", refused.code == Int(errSecParam), "\(refused)")
            check("refused access control: domain", refused.domain == kCFErrorDomainOSStatus as String, "\(refused)")
            check(
                "refused access control: description",
                !refused.description.isEmpty
                    && refused.userInfo[NSLocalizedDescriptionKey] as? String == refused.description, "\(refused)")
        } else {
            check("refused access control", false, "no error")
        }

        check("LAContext as a hashable object", OtherIdioms.contextsAreObjects())
        check(
            "flags from CFOptionFlags, two constraints without a conjunction",
            OtherIdioms.flagsFromStorage(CFOptionFlags(0)) != nil)

        let internet = OtherIdioms.internetPassword() ?? [:]
        check(
            "internet password attributes",
            internet[kSecAttrProtocol as String] as? String == kSecAttrProtocolHTTPS as String
                && internet[kSecAttrAuthenticationType as String] as? String == kSecAttrAuthenticationTypeHTMLForm
                    as String
                && internet[kSecAttrPort as String] as? Int == 443
                && internet[kSecAttrPath as String] as? String == "/login", "\(internet)")
        store.set(Data("3".utf8), forKey: "c")
        check(
            "remove all generic passwords",
            OtherIdioms.removeAll(kSecClassGenericPassword) == errSecSuccess && store.allKeys().isEmpty,
            "\(store.allKeys())")
        check(
            "remove all internet passwords",
            OtherIdioms.removeAll(kSecClassInternetPassword) == errSecSuccess && OtherIdioms.internetPassword() != nil)

        let dataKeyed = DataKeyedStore(serviceName: "com.example.data-keyed")
        check(
            "a key stored as Data in kSecAttrAccount",
            dataKeyed.set("v1", forKey: "alpha") && dataKeyed.string(forKey: "alpha") == "v1")
        check(
            "update of a Data-keyed item",
            dataKeyed.set("v2", forKey: "alpha") && dataKeyed.string(forKey: "alpha") == "v2")
        dataKeyed.set("v3", forKey: "beta")
        check(
            "Data-keyed accounts read back with as? Data", dataKeyed.allKeys() == ["alpha", "beta"],
            "\(dataKeyed.allKeys())")

        check(
            "certificate stored with kSecValueRef",
            PinnedCertificateStore.save(label: "api.example.com pin") == errSecSuccess)
        if let pinned = PinnedCertificateStore.load(label: "api.example.com pin") {
            check("certificate read back with kSecReturnRef matches the pin", PinnedCertificateStore.matchesPin(pinned))
            check("public key pinned with SecCertificateCopyKey", PinnedCertificateStore.matchesKeyPin(pinned))
            check(
                "certificate subject summary",
                SecCertificateCopySubjectSummary(pinned) as String? == "corpus.example.com",
                "\(String(describing: SecCertificateCopySubjectSummary(pinned)))")
            check(
                "certificate deleted by kSecValueRef",
                PinnedCertificateStore.remove(pinned) == errSecSuccess
                    && PinnedCertificateStore.load(label: "api.example.com pin") == nil)
        } else {
            check("certificate read back with kSecReturnRef", false, "not found")
        }

        let generated = KeyAndIdentityCode.generateSigningKey()
        check("SecKeyCreateRandomKey into the keychain", generated.key != nil, "\(String(describing: generated.error))")
        if let signingKey = KeyAndIdentityCode.loadSigningKey() {
            check(
                "a key found by tag with kSecReturnRef signs and verifies", KeyAndIdentityCode.signAndVerify(signingKey)
            )
            check("ECIES encrypts and decrypts", KeyAndIdentityCode.encryptAndDecrypt(signingKey) == "sealed note")
        } else {
            check("a key found by tag with kSecReturnRef", false, "not found")
        }
        check(
            "the key deleted by tag",
            KeyAndIdentityCode.deleteSigningKey() == errSecSuccess && KeyAndIdentityCode.loadSigningKey() == nil)
        check(
            "SecPKCS12Import with a wrong passphrase",
            KeyAndIdentityCode.importClientIdentity(passphrase: "wrong").status == errSecAuthFailed)
        let imported = KeyAndIdentityCode.importClientIdentity(passphrase: "corpus")
        check(
            "SecPKCS12Import gives the identity and its label",
            imported.identity != nil && imported.label == "corpus client", "\(imported)")
        if let identity = imported.identity {
            let stored = KeyAndIdentityCode.storeAndFind(identity)
            check(
                "an imported identity stored and found as kSecClassIdentity",
                stored.stored == errSecSuccess && stored.subject == "corpus client", "\(stored)")
        }

        if let enclaveKey = try? SecureEnclaveCode.makeSigningKey() {
            check("a SecureEnclave signing key signs", SecureEnclaveCode.signAndVerify(enclaveKey))
            let restored = SecureEnclaveCode.restore(enclaveKey.dataRepresentation)
            check(
                "restored from its dataRepresentation",
                restored.map {
                    SecureEnclaveCode.signAndVerify($0)
                        && $0.publicKey.rawRepresentation == enclaveKey.publicKey.rawRepresentation
                } ?? false)
        } else {
            check("a SecureEnclave signing key", false, "not made")
        }
        check("a SecureEnclave key agreement derives the other side's key", SecureEnclaveCode.agreeOnAKey())

        let key = OtherIdioms.randomKey()
        check("SecRandomCopyBytes", key != nil && key != [UInt8](repeating: 0, count: 32))
        let shared = OtherIdioms.sharedWebCredentialErrors()
        check(
            "SecAddSharedWebCredential without associated domains", shared.added == Int(errSecMissingEntitlement),
            "\(shared)")
        check(
            "SecRequestSharedWebCredential without associated domains",
            shared.requested == Int(errSecMissingEntitlement) && shared.credentials == 0, "\(shared)")
        let password = OtherIdioms.generatedPassword() ?? ""
        let groups = password.split(separator: "-", omittingEmptySubsequences: false)
        check(
            "SecCreateSharedWebCredentialPassword form", groups.count == 4 && groups.allSatisfy { $0.count == 3 },
            password)
        check(
            "SecCopyErrorMessageString",
            OtherIdioms.message(for: errSecItemNotFound) == "The specified item could not be found in the keychain.",
            "\(String(describing: OtherIdioms.message(for: errSecItemNotFound)))")

        check(
            "an update with the whole item as its query, then an add",
            UpdateOrAddStore.save(Data("first".utf8), account: "me") == errSecSuccess
                && UpdateOrAddStore.save(Data("second".utf8), account: "me") == errSecSuccess
                && UpdateOrAddStore.read("me") == Data("second".utf8),
            "\(String(describing: UpdateOrAddStore.read("me")))")

        check(
            "a synchronizable item read by its persistent reference",
            SynchronizedReference.storeAndReadBack() == Data("synced".utf8))
        check(
            "a synchronizable item with a ThisDeviceOnly accessibility is stored",
            SynchronizedReference.storeSynchronizableThisDeviceOnly())

        check("LAError codes mapped through kLAError constants", LAErrorMapping.mapsTheContextsErrors())
        check("OSStatus text from SecBase.h's constants and sentences", StatusMessages.describesEveryKind())
        check("a CFError made with CFErrorCreate reads back as Security's", KeyStoreErrors.readBackAsSecuritysOwn())

        check("a CryptoKit key stored through CFDataCreateWithBytesNoCopy", CryptoKitKeyStore.storeAndReadBack())
        check("the bundle identifier through kCFBundleIdentifierKey", !CryptoKitKeyStore.bundleIdentifier().isEmpty)

        check("results told apart with CFGetTypeID", TypeIDChecks.tellResultsApart())
        check(
            "an application group the app was not declared with is not its access group",
            AppGroupStore.share(Data("x".utf8), account: "token", group: "group.com.example.corpus")
                == errSecMissingEntitlement)

        exit(failures == 0 ? 0 : 1)
    }
}
