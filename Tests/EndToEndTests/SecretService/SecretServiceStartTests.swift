import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How the Secret Service starts: on demand, from the activation file `keychain-secret-service install`
/// writes, with no desktop; and not over another provider, which it names.
@Suite struct SecretServiceStartTests {
    /// The session bus finds the user's activation file before gnome-keyring's (the machine's
    /// `/usr/share/dbus-1/services` holds gnome-keyring's) and starts the keychain's at the
    /// first call.
    @Test func theSessionBusStartsItOnDemandBeforeGnomeKeyring() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let services = shell.home.appendingPathComponent("dbus-1/services")
        let bus = try PrivateBus(
            prefix: "activation", session: true, serviceDirectories: [services.path, "/usr/share/dbus-1/services"],
            daemonEnvironment: shell.environment)
        defer { bus.stop() }

        let config = shell.home.appendingPathComponent("config")
        let bridge = SecretServiceHarness.program.path
        let installed = try shell.script(
            """
            DBUS_SESSION_BUS_ADDRESS='\(bus.address)' XDG_CONFIG_HOME='\(config.path)' '\(bridge)' install
            """)
        #expect(installed.status == 0, "\(installed.stderr)")
        let program = SecretServiceHarness.program.resolvingSymlinksInPath().path
        // The bus had no such directory when it started: install has it read its files again.
        #expect(installed.stdout.contains("the session bus reloaded its files"), "\(installed.stdout)")
        let activation = try String(
            contentsOf: services.appendingPathComponent("org.freedesktop.secrets.service"), encoding: .utf8)
        #expect(activation.contains("Name=org.freedesktop.secrets\nExec=\(program)\n"))
        #expect(activation.contains("SystemdService=keychain-secret-service.service"))
        let unit = try String(
            contentsOf: config.appendingPathComponent("systemd/user/keychain-secret-service.service"),
            encoding: .utf8)
        #expect(unit.contains("Type=dbus\nBusName=org.freedesktop.secrets\nExecStart=\(program)"))

        // Nothing serves the name until the first call starts the keychain's bridge.
        let result = try shell.script(
            """
            export DBUS_SESSION_BUS_ADDRESS='\(bus.address)'
            printf 'on-demand' | secret-tool store --label='Started on demand' purpose activation
            secret-tool lookup purpose activation; echo
            pid=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '{print $2}')
            readlink "/proc/$pid/exe"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "on-demand\n\(program)\n", "\(result.stdout)")

        let removed = try shell.script("XDG_CONFIG_HOME='\(config.path)' '\(bridge)' uninstall")
        #expect(removed.stdout.contains("removed"), "\(removed.stdout)")
        #expect(
            !FileManager.default.fileExists(
                atPath: services.appendingPathComponent("org.freedesktop.secrets.service").path))
    }

    /// With gnome-keyring on the bus, the bridge does not start: it names the program that has
    /// the name and says how to switch.
    @Test func anotherProviderIsNamedWithTheWayToSwitch() throws {
        let service = try SecretServiceHarness(startingBridge: false)
        defer { service.stop() }
        let keyring = try service.bus.launchService(
            "/usr/bin/gnome-keyring-daemon", ["--start", "--foreground", "--components=secrets"],
            extra: service.shell.environment)
        try service.bus.waitForOwner(of: "org.freedesktop.secrets")
        let refused = try service.script("'\(SecretServiceHarness.program.path)'")
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "is already served by /usr/bin/gnome-keyring-daemon (pid \(keyring.processIdentifier))"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("systemctl --user mask --now gnome-keyring-daemon.service"))
        #expect(refused.stderr.contains("--replace"))
    }
}
