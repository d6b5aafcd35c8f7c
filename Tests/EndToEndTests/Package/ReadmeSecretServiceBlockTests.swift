import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension ReadmeTests {
    /// Issue 53: the Secret Service block, run as written on a session bus of its own, the way a
    /// newcomer moves from gnome-keyring: gnome-keyring serves and holds an item; the import
    /// takes it; `install` puts the activation file in place; gnome-keyring stops (the block's
    /// `systemctl --user mask --now` line, which needs a user service manager the test machine
    /// has not: the test ends it by its pid, which is what the line does); then `secret-tool`
    /// stores and looks up through the bridge the bus starts on demand, and the block's last
    /// line, with no bus at all, reads it again. (It found "imported 1 items".)
    @Test func theSecretServiceBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "keychain-secret-service install")
        try #require(lines.count == 6, "\(lines)")
        #expect(lines[2].hasPrefix("systemctl --user mask --now gnome-keyring-daemon"))
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let bin = try Self.installed(["keychainctl", "keychain-secret-service"], in: shell)
        let services = shell.home.appendingPathComponent("dbus-1/services")
        var environment = shell.environment
        environment["PATH"] = bin.path + ":/usr/bin:/bin"
        let bus = try PrivateBus(
            prefix: "readme", session: true, serviceDirectories: [services.path, "/usr/share/dbus-1/services"],
            daemonEnvironment: environment)
        defer { bus.stop() }
        let path = "export PATH='\(bin.path)':\"$PATH\" DBUS_SESSION_BUS_ADDRESS='\(bus.address)'\n"

        let keyring = try bus.launchService(
            "/usr/bin/gnome-keyring-daemon", ["--foreground", "--unlock", "--components=secrets"],
            extra: environment, input: "login-password")
        defer { keyring.end() }
        try bus.waitForOwner(of: "org.freedesktop.secrets")
        var result = try shell.script(
            path + "printf 'imap-password' | secret-tool store --label=Mail service imap user alice")
        #expect(result.status == 0, "\(result.stderr)")
        sleep(1)

        result = try shell.script(path + lines[0])
        #expect(
            result.stdout == "imported 1 item from /usr/bin/gnome-keyring-daemon\n", "\(result.stdout)\(result.stderr)")
        result = try shell.script(path + lines[1])
        #expect(result.status == 0, "\(result.stderr)")
        kill(keyring.processIdentifier, SIGTERM)
        keyring.waitUntilExit()

        result = try shell.script(path + "printf 'ghp_token' | " + lines[3])
        #expect(result.status == 0, "\(result.stderr)")
        result = try shell.script(path + lines[4])
        #expect(result.stdout == "ghp_token", "\(result.stdout)\(result.stderr)")
        // No bus but the one the line starts.
        result = try shell.script("export PATH='\(bin.path)':\"$PATH\"; unset DBUS_SESSION_BUS_ADDRESS\n" + lines[5])
        #expect(result.stdout == "ghp_token", "\(result.stdout)\(result.stderr)")
    }
}
