import Foundation
import Testing

/// The Secret Service (`keychain-secret-service`) driven by clients others wrote, on a
/// session bus of the test's own with no desktop: libsecret's `secret-tool`, SecretStorage's
/// own test suite, Python's `keyring`, and a lookup as Chromium makes it.
@Suite struct SecretServiceClientTests {
    @Test func secretToolStoresLooksUpSearchesAndClears() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        var result = try service.script(
            """
            printf 'hunter2' | secret-tool store --label='GitHub token' service github.com user alice
            printf 'other' | secret-tool store --label='GitLab token' service gitlab.com user alice
            secret-tool lookup service github.com user alice
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "hunter2")

        // Exact, case-sensitive matches: another case or a value's prefix is not a match.
        result = try service.script("secret-tool lookup service GitHub.com user alice")
        #expect(result.status != 0 && result.stdout.isEmpty)
        result = try service.script("secret-tool lookup service github user alice")
        #expect(result.status != 0 && result.stdout.isEmpty)

        // secret-tool writes the attributes on standard error.
        result = try service.script("secret-tool search --all user alice 2>&1")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("label = GitHub token") && result.stdout.contains("label = GitLab token"))
        #expect(result.stdout.contains("secret = hunter2") && result.stdout.contains("attribute.service = github.com"))
        // Each item's path ends in one element of [A-Za-z0-9_] (secret-tool shows that element).
        let paths = result.stdout.split(separator: "\n").filter { $0.hasPrefix("[/") }
        #expect(paths.count == 2)
        #expect(
            paths.allSatisfy { $0.range(of: #"^\[/[a-z0-9]{32}\]$"#, options: .regularExpression) != nil }, "\(paths)")

        // A new secret under the same attributes replaces the old (libsecret stores with replace).
        result = try service.script(
            """
            printf 'hunter3' | secret-tool store --label='GitHub token' service github.com user alice
            secret-tool lookup service github.com user alice
            """)
        #expect(result.stdout == "hunter3")
        result = try service.script("secret-tool search --all service github.com")
        #expect(result.stdout.components(separatedBy: "label = ").count == 2, "one item: \(result.stdout)")

        result = try service.script(
            """
            secret-tool clear service github.com user alice
            secret-tool lookup service github.com user alice; echo "lookup: $?"
            secret-tool lookup service gitlab.com user alice
            """)
        #expect(result.stdout == "lookup: 1\nother", "\(result.stdout) \(result.stderr)")
    }

    /// Chromium and Electron apps keep the key of their cookie and password encryption under
    /// this schema; they fall back to a key everybody knows when no provider answers.
    @Test func chromiumFindsItsEncryptionKey() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            printf 'v11-key-material' | secret-tool store --label='Chrome Safe Storage' \
                xdg:schema chrome_libsecret_os_crypt_password_v2 application chrome
            secret-tool lookup xdg:schema chrome_libsecret_os_crypt_password_v2 application chrome
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "v11-key-material")
    }

    /// SecretStorage's test suite (`tests/run_tests.py` of its PyPI release), run against the
    /// real `org.freedesktop.secrets` as its README says: every test that is not for its mock
    /// server passes, with its encrypted (DH) sessions.
    @Test func secretStoragesOwnSuitePasses() throws {
        let suite = URL(fileURLWithPath: SecretServiceClientTests.secretStorageRelease)
        try #require(
            FileManager.default.fileExists(atPath: suite.appendingPathComponent("tests/run_tests.py").path),
            "SecretStorage's release is not at \(suite.path): .ci/run downloads it from PyPI")
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script("cd '\(suite.path)' && /usr/bin/python3 tests/run_tests.py 2>&1")
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("\nOK"), "\(result.stdout)")
        #expect(!result.stdout.contains("FAIL") && !result.stdout.contains("ERROR"), "\(result.stdout)")
        // Its tests of items and collections ran; only the mock server's were skipped.
        #expect(result.stdout.contains("test_secret (test_item.ItemTest.test_secret) ... ok"), "\(result.stdout)")
    }

    /// One `GetSecrets` for many items (which the bridge fetches in one request to keychaind)
    /// returns each item's own secret, and leaves out paths that name no item of the client's.
    @Test func getSecretsReturnsEachItemsSecret() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            /usr/bin/python3 - <<'PY'
            import secretstorage
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            from jeepney import DBusAddress, new_method_call
            from jeepney.wrappers import unwrap_msg
            c = secretstorage.dbus_init()
            session = secretstorage.util.open_session(c)
            collection = secretstorage.get_default_collection(c, session)
            paths = [collection.create_item(f"item {i}", {"n": str(i)}, b"secret-%d" % i).item_path for i in range(40)]
            missing = "/org/freedesktop/secrets/collection/login/" + "0" * 32
            service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                                  interface="org.freedesktop.Secret.Service")
            def plain(secret):
                decryptor = Cipher(algorithms.AES(session.aes_key), modes.CBC(bytes(secret[1]))).decryptor()
                padded = decryptor.update(bytes(secret[2])) + decryptor.finalize()
                return padded[:-padded[-1]]
            for asked in (paths + [missing], paths[:3]):
                secrets = unwrap_msg(c.send_and_get_reply(
                    new_method_call(service, "GetSecrets", "aoo", (asked, session.object_path))))[0]
                right = all(plain(secrets[path]) == b"secret-%d" % paths.index(path) for path in secrets)
                print(len(secrets), missing in secrets, right)
            PY
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "40 False True\n3 False True\n", "\(result.stdout)")
    }

    /// Errors by their names: an unknown algorithm, an object that is not there, a locked
    /// keychain; and the aliases that always name the default collection.
    @Test func errorsAndAliasesAreTheSpecifications() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" passcode set
            /usr/bin/python3 - <<'PY'
            import secretstorage
            from jeepney import DBusAddress, new_method_call
            from jeepney.wrappers import unwrap_msg, DBusErrorResponse
            c = secretstorage.dbus_init()
            def call(path, interface, member, signature, body):
                address = DBusAddress(path, bus_name="org.freedesktop.secrets", interface=interface)
                try:
                    return unwrap_msg(c.send_and_get_reply(new_method_call(address, member, signature, body)))
                except DBusErrorResponse as error:
                    return error.name
            root, service = "/org/freedesktop/secrets", "org.freedesktop.Secret.Service"
            print(call(root, service, "OpenSession", "sv", ("rot13", ("s", ""))))
            print(call(root, service, "ReadAlias", "s", ("default",))[0],
                  call(root, service, "ReadAlias", "s", ("login",))[0])
            print(call(root, service, "ReadAlias", "s", ("nothing",))[0])
            print(call(root + "/aliases/default", "org.freedesktop.DBus.Properties", "Get", "ss",
                       ("org.freedesktop.Secret.Collection", "Label"))[0][1])
            print(call(root + "/collection/login/" + "0" * 32, "org.freedesktop.DBus.Properties", "Get", "ss",
                       ("org.freedesktop.Secret.Item", "Label")))
            print(call(root + "/collection/nosuch", "org.freedesktop.Secret.Collection", "Delete", "", ()))
            secretstorage.get_default_collection(c).create_item("x", {"k": "v"}, b"s")
            call(root, service, "Lock", "ao", ([root + "/collection/login"],))
            print(call(root, service, "SearchItems", "a{ss}", ({"k": "v"},)))
            PY
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                org.freedesktop.DBus.Error.NotSupported
                /org/freedesktop/secrets/collection/login /org/freedesktop/secrets/collection/login
                /
                Login
                org.freedesktop.Secret.Error.NoSuchObject
                org.freedesktop.Secret.Error.NoSuchObject
                org.freedesktop.Secret.Error.IsLocked

                """, "\(result.stdout)")
    }

    /// Issue 53: a secret over 16 KiB, a label or value over 4 KiB, a name over 61 bytes or more
    /// than 55 attributes failed with "malformed message" (and at 1 MiB, a broken pipe), where
    /// gnome-keyring stores them. Through SecretStorage: a 1 MiB secret with a 64 KiB label, and
    /// 256 attributes with a 1 KiB name and a 64 KiB value, stored and read back; one byte over a
    /// limit is InvalidArgs, saying the limit.
    @Test func theSizesRealClientsStoreFit() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            /usr/bin/python3 - <<'PY'
            import secretstorage
            from jeepney.wrappers import DBusErrorResponse
            c = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(c)
            big = bytes(range(256)) * 4096
            label = "L" * 65536
            collection.create_item(label, {"kind": "big"}, big)
            found = list(collection.search_items({"kind": "big"}))[0]
            print(found.get_secret() == big, len(found.get_label()))
            many = {"attribute-%03d" % n: "value %d" % n for n in range(254)}
            many["n" * 1024] = "long name"
            many["long value"] = "v" * 65536
            collection.create_item("many", many, b"many attributes")
            found = list(collection.search_items(many))[0]
            print(len(found.get_attributes()), found.get_attributes() == many, found.get_secret())
            def refused(label, attributes, secret):
                try:
                    collection.create_item(label, attributes, secret)
                    return "stored"
                except DBusErrorResponse as error:
                    return error.name + " " + str(error.data[0] if error.data else "")
            print(refused("x", {"kind": "over"}, big + b"!"))
            print(refused("x", {"kind": "over", "v": "v" * 65537}, b"s"))
            PY
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result.stdout)")
        #expect(lines.first == "True 65536", "\(result.stdout)")
        #expect(lines.dropFirst().first == "256 True b'many attributes'", "\(result.stdout)")
        #expect(
            lines.dropFirst(2).first?.hasPrefix("org.freedesktop.DBus.Error.InvalidArgs") == true
                && lines.dropFirst(2).first?.contains("1 MiB") == true, "\(result.stdout)")
        #expect(
            lines.dropFirst(3).first?.hasPrefix("org.freedesktop.DBus.Error.InvalidArgs") == true
                && lines.dropFirst(3).first?.contains("64 KiB") == true, "\(result.stdout)")
    }

    /// Issue 53: on a locked keychain (after the idle lock, say) `secret-tool lookup` printed
    /// nothing and exited 1, as for an item that is not there. With no terminal to draw the
    /// unlock sheet on, the client is told the keychain is locked and how to unlock it.
    @Test func aLockedKeychainIsSaidToBeLocked() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" passcode set
            printf 'kept' | secret-tool store --label='Mail' service imap user alice
            "$KEYCHAINCTL" lock
            secret-tool lookup service imap user alice; echo "exit $?"
            """)
        #expect(result.stdout.hasSuffix("exit 1\n") && !result.stdout.contains("kept"), "\(result.stdout)")
        #expect(
            result.stderr.contains("locked") && result.stderr.contains("keychainctl unlock"),
            "\(result.stdout) \(result.stderr)")
    }

    /// Where .ci/run unpacks SecretStorage's release (PyPI's sdist holds the tests).
    static let secretStorageRelease = "/opt/SecretStorage-3.3.3"

    /// Python's `keyring`, whose SecretService backend libsecret-less Python programs use.
    @Test func pythonKeyringStoresAndReads() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let result = try service.script(
            """
            /usr/bin/python3 - <<'PY'
            import keyring
            from keyring.backends import SecretService
            keyring.set_keyring(SecretService.Keyring())
            keyring.set_password("pypi", "alice", "s3cret")
            print(keyring.get_password("pypi", "alice"))
            keyring.delete_password("pypi", "alice")
            print(keyring.get_password("pypi", "alice"))
            PY
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "s3cret\nNone\n", "\(result.stdout)")
    }
}
