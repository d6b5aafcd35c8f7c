import Foundation
import Testing

/// One app reading another's item, as a person allows it: the second app finds the first one's
/// item only as a locked path, is refused its secret, and asks (`Unlock`); keychaind draws the
/// question on that app's terminal, the owner answers Allow, proves it with the passcode, and
/// chooses Only This Time or Always Allow. "Always" outlives a restart of everything and is
/// listed, and taken back, with `keychainctl apps`.
@Suite struct SecretServiceConsentTests {
    /// SecretStorage (python3, another app than secret-tool) looks for the item, is refused its
    /// secret while it is locked, asks, and reads it once allowed.
    static let reader = """
        import secretstorage, sys
        connection = secretstorage.dbus_init()
        items = list(secretstorage.search_items(connection, {"service": "github.com"}))
        print("found", len(items), "locked" if items and items[0].is_locked() else "unlocked", flush=True)
        item = items[0]
        if item.is_locked():
            try:
                item.get_secret()
                print("read while locked", flush=True)
            except secretstorage.exceptions.LockedException:
                print("refused while locked", flush=True)
            if sys.argv[1:] == ["ask"]:
                print("dismissed" if item.unlock() else "allowed", flush=True)
        try:
            print("secret:", item.get_secret().decode(), "label:", item.get_label(), flush=True)
        except secretstorage.exceptions.LockedException:
            print("still locked", flush=True)
        """

    func read(_ service: SecretServiceHarness, ask: Bool = false) throws -> CommandRunner.Output {
        try service.script("/usr/bin/python3 - \(ask ? "ask" : "") <<'PY'\n\(Self.reader)\nPY")
    }

    @Test func theOwnerAllowsAnotherAppAlwaysAndItLastsUntilRevoked() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        var result = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" passcode set
            printf 'gh-token' | secret-tool store --label='GitHub token' service github.com user alice
            """)
        #expect(result.status == 0, "\(result.stderr)")

        // Without a terminal no one can be asked: the item stays locked.
        result = try read(service, ask: true)
        #expect(
            result.stdout.hasPrefix("found 1 locked\nrefused while locked\ndismissed\nstill locked\n"),
            "\(result.stdout) \(result.stderr)")

        // On a terminal, the keychain asks; the owner allows, proves it, and chooses Always.
        let script = service.shell.home.appendingPathComponent("reader.py")
        try Self.reader.write(to: script, atomically: true, encoding: .utf8)
        let app = try TmuxSession(
            URL(fileURLWithPath: "/usr/bin/python3"), [script.path, "ask"], environment: service.shell.environment)
        defer { app.close() }
        #expect(app.waitFor("refused while locked"), "\(app.screen)")
        #expect(app.waitFor("wants to read “GitHub token”, saved by “/usr/bin/secret-tool”."), "\(app.screen)")
        #expect(app.screen.contains("“/usr/bin/python3.11”") && app.screen.contains("[Esc] Deny"), "\(app.screen)")
        app.send("Enter")
        #expect(app.waitFor("Passcode:"), "\(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("[Enter] Always Allow"), "\(app.screen)")
        app.send("Enter")
        #expect(app.waitFor("secret: gh-token label: GitHub token"), "\(app.screen)")

        // After a restart of the bridge and of keychaind, it reads with no question asked.
        service.stopBridge()
        _ = try service.shell.run(["daemon", "stop"])
        try service.startBridge()
        result = try service.script("printf '1234\\n' | \"$KEYCHAINCTL\" unlock")
        #expect(result.status == 0, "\(result.stderr)")
        result = try read(service)
        #expect(
            result.stdout == "found 1 unlocked\nsecret: gh-token label: GitHub token\n",
            "\(result.stdout) \(result.stderr)")

        // The owner sees the leave among the app's entitlements, and takes it back.
        result = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" owner login >/dev/null
            "$KEYCHAINCTL" apps list
            """)
        let grant = try #require(
            result.stdout.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("secret-service-item:") },
            "\(result.stdout)")
        #expect(grant.hasSuffix("@/usr/bin/secret-tool"), "\(grant)")
        result = try service.script("\"$KEYCHAINCTL\" apps revoke /usr/bin/python3.11 '\(grant)'")
        #expect(result.status == 0, "\(result.stderr)")
        result = try read(service)
        #expect(result.stdout == "found 1 locked\nrefused while locked\nstill locked\n", "\(result.stdout)")
    }

    @Test func denyingOrOnlyThisTimeLeavesNothingBehind() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        _ = try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" passcode set
            printf 'gh-token' | secret-tool store --label='GitHub token' service github.com user alice
            """)
        let script = service.shell.home.appendingPathComponent("reader.py")
        try Self.reader.write(to: script, atomically: true, encoding: .utf8)

        // Deny: the app is told the prompt was dismissed, and reads nothing.
        let denied = try TmuxSession(
            URL(fileURLWithPath: "/usr/bin/python3"), [script.path, "ask"], environment: service.shell.environment)
        defer { denied.close() }
        #expect(denied.waitFor("[Esc] Deny"), "\(denied.screen)")
        denied.send("Escape")
        #expect(denied.waitFor("dismissed"), "\(denied.screen)")
        #expect(denied.waitFor("still locked"), "\(denied.screen)")

        // Only This Time: read on that connection, and not by the next run of the app.
        let once = try TmuxSession(
            URL(fileURLWithPath: "/usr/bin/python3"), [script.path, "ask"], environment: service.shell.environment)
        defer { once.close() }
        #expect(once.waitFor("[Esc] Deny"), "\(once.screen)")
        once.send("Enter")
        #expect(once.waitFor("Passcode:"), "\(once.screen)")
        once.send("1234", "Enter")
        #expect(once.waitFor("[Esc] Only This Time"), "\(once.screen)")
        once.send("Escape")
        #expect(once.waitFor("secret: gh-token"), "\(once.screen)")
        let later = try read(service)
        #expect(later.stdout == "found 1 locked\nrefused while locked\nstill locked\n", "\(later.stdout)")
    }
}
