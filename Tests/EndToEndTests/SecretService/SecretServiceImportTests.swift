import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Moving in from gnome-keyring: a real gnome-keyring with a login keyring unlocked by its
/// password, as a desktop login leaves it, and items stored with secret-tool; every one comes
/// into the keychain with its label, attributes and dates, once, and belongs to the owner.
@Suite struct SecretServiceImportTests {
    @Test func gnomeKeyringsItemsComeInOnceWithLabelsAttributesAndDates() throws {
        let service = try SecretServiceHarness(startingBridge: false)
        defer { service.stop() }
        var result = try service.script("printf '1234\\n' | \"$KEYCHAINCTL\" passcode set")
        #expect(result.status == 0, "\(result.stderr)")
        let keyring = try service.bus.launchService(
            "/usr/bin/gnome-keyring-daemon", ["--foreground", "--unlock", "--components=secrets"],
            extra: service.shell.environment, input: "login-password")
        try service.bus.waitForOwner(of: "org.freedesktop.secrets")
        result = try service.script(
            """
            printf 'imap-password' | secret-tool store --label='Mail: alice@example.com' service imap user alice
            printf 'v11-key' | secret-tool store --label='Chrome Safe Storage' \\
                xdg:schema chrome_libsecret_os_crypt_password_v2 application chrome
            /usr/bin/python3 -c "
            import secretstorage
            c = secretstorage.dbus_init()
            for item in secretstorage.get_default_collection(c).search_items({'service': 'imap'}):
                print(item.get_created(), item.get_modified())"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let dates = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { TimeInterval($0) }
        #expect(dates.count == 2, "\(result.stdout)")

        // Wait until the dates are in the past (kept dates may not be later than now).
        sleep(1)
        let program = SecretServiceHarness.program.path
        // keychainctl's command runs keychain-secret-service's.
        result = try service.script("\"$KEYCHAINCTL\" import --from-secret-service")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "imported 2 items from /usr/bin/gnome-keyring-daemon\n", "\(result.stdout)")
        result = try service.script("'\(program)' import")
        #expect(
            result.stdout == "imported 0 items from /usr/bin/gnome-keyring-daemon; 2 were imported before\n",
            "\(result.stdout)")
        // Nothing left gnome-keyring.
        result = try service.script("secret-tool lookup service imap user alice")
        #expect(result.stdout == "imap-password")

        // The switch: gnome-keyring stops, the keychain serves the name.
        kill(keyring.processIdentifier, SIGTERM)
        keyring.waitUntilExit()
        try service.startBridge()

        // The owner sees each item with its label, attributes and gnome-keyring's dates.
        result = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" owner login >/dev/null && "$KEYCHAINCTL" dump-keychain
            """)
        #expect(result.stdout.contains("Mail: alice@example.com") && result.stdout.contains("Chrome Safe Storage"))
        #expect(
            result.stdout.contains("ss:xdg:schema") && result.stdout.contains("chrome_libsecret_os_crypt_password_v2"))
        let created = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: dates[0]))
        #expect(result.stdout.contains("<timedate>=\"\(created)\""), "\(created) in \(result.stdout)")

        // An app sees the imported items as the owner's: locked, until the owner allows it.
        result = try service.script(
            """
            /usr/bin/python3 -c "
            import secretstorage
            c = secretstorage.dbus_init()
            items = list(secretstorage.search_items(c, {'service': 'imap'}))
            print(len(items), items[0].is_locked())"
            """)
        #expect(result.stdout == "1 True\n", "\(result.stdout) \(result.stderr)")
    }
}
