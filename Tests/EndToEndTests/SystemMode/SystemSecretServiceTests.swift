import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service with the system daemon: the bridge root installed and registered as the
/// Secret Service bridge, run by alice on her session bus, keeps her apps' items in her
/// keychain in the system daemon, each app apart; a copy of the bridge that root did not
/// register may not act for anyone; and bob, another user on her bus, is served nothing.
@Suite(.serialized) struct SystemSecretServiceTests {
    @Test func aRegisteredBridgeServesAUsersAppsFromTheSystemDaemon() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let (alice, bob) = (try LocalUser.alice(), try LocalUser.bob())
        let bus = try PrivateBus(prefix: "secrets-system", session: true)
        defer { bus.stop() }
        // Root's copy, registered as the bridge; and a copy root did not register.
        let bridge = daemon.trustedPrograms.appendingPathComponent("keychain-secret-service")
        let unregistered = daemon.trustedPrograms.appendingPathComponent("other-secret-service")
        for copy in [bridge, unregistered] {
            try FileManager.default.copyItem(at: SecretServiceHarness.program, to: copy)
            chmod(copy.path, 0o755)
        }
        try daemon.register(
            "keychain-secret-service", identifier: "keychain-secret-service", executable: bridge.path,
            groups: ["keychain-secret-service"], secretServiceBridge: true)
        var environment = SystemDaemonHarness.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address

        /// `command` as `user` on the bus, with the test's system daemon.
        func run(as user: LocalUser, _ command: String) throws -> CommandRunner.Output {
            try daemon.shellCommand(as: user, "export DBUS_SESSION_BUS_ADDRESS='\(bus.address)'; \(command)")
        }
        func serve(_ program: URL) throws -> SpawnedProgram {
            let served = try bus.launchService(
                "/usr/bin/setpriv",
                Array(alice.setpriv.dropFirst()) + [program.path, "--system-socket", daemon.socket],
                extra: environment)
            try bus.waitForOwner(of: "org.freedesktop.secrets")
            return served
        }

        // The copy root did not register: the daemon lets it act for nobody.
        let refused = try serve(unregistered)
        var result = try run(as: alice, "printf pw | secret-tool store --label=x service imap user alice")
        #expect(result.status != 0, "an unregistered bridge stored an item: \(result.stdout)")
        #expect(result.stderr.contains("only the program registered as the Secret Service bridge"), "\(result.stderr)")
        #expect(daemon.daemonLog.contains("app=\(unregistered.path) audit=true"), "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("result=-34018"), "errSecMissingEntitlement, audited")
        refused.end()

        _ = try serve(bridge)
        result = try run(as: alice, "printf imap-password | secret-tool store --label='Mail' service imap user alice")
        #expect(result.status == 0, "\(result.stderr)\n\(daemon.daemonLog)")
        result = try run(as: alice, "secret-tool lookup service imap user alice")
        #expect(result.stdout == "imap-password", "\(result.stderr)")

        // Issue 52: the `session` collection was keyed by the path the bridge read, so an
        // LD_PRELOADed secret-tool (untrusted to the system daemon) read the real one's session
        // items. They belong to the app keychaind decides the client is.
        result = try run(
            as: alice, "printf session-secret | secret-tool store --collection=session --label=S service sess user alice")
        #expect(result.status == 0, "\(result.stderr)")
        result = try run(as: alice, "secret-tool lookup service sess user alice")
        #expect(result.stdout == "session-secret", "\(result.stderr)")
        result = try run(as: alice, "LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 secret-tool lookup service sess user alice")
        #expect(result.stdout.isEmpty, "an LD_PRELOADed secret-tool read the real one's session item")

        // Issue 52, attack 4b: a process connects, forks, and runs the trusted secret-tool
        // (which keeps running, waiting for a password) while its child calls on the connection
        // it inherited: the bus names the parent, which runs secret-tool by then. The bridge
        // noted the program when the connection joined, and refuses.
        let script = daemon.base.appendingPathComponent("forked-caller.py")
        try """
            import os, sys, time
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
            from jeepney.low_level import HeaderFields, MessageType
            connection = open_dbus_connection(bus='SESSION')
            time.sleep(0.5)
            if os.fork() != 0:
                reading, writing = os.pipe()
                os.dup2(reading, 0)
                os.set_inheritable(writing, True)  # secret-tool keeps waiting for its password
                os.execv('/usr/bin/secret-tool', ['secret-tool', 'store', '--label=decoy', 'service', 'decoy'])
            time.sleep(1.0)
            service = DBusAddress('/org/freedesktop/secrets', bus_name='org.freedesktop.secrets',
                                  interface='org.freedesktop.Secret.Service')
            reply = connection.send_and_get_reply(new_method_call(service, 'SearchItems', 'a{ss}', ({'service': 'imap'},)))
            if reply.header.message_type == MessageType.error:
                print('refused', reply.header.fields[HeaderFields.error_name], reply.body, flush=True)
            else:
                print('found' if reply.body[0] else 'nothing', flush=True)
            os._exit(0)
            """.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o644)
        result = try run(as: alice, "timeout 6 /usr/bin/python3 '\(script.path)'; true")
        #expect(
            result.stdout.hasPrefix("refused org.freedesktop.DBus.Error.AccessDenied")
                && result.stdout.contains("runs another program than when it connected"),
            "\(result.stdout)\(result.stderr)")

        // Issue 52, attack 4a: a session bus of alice's own (dbus-run-session, a real
        // dbus-daemon she started) may name any process as a call's sender: the registered
        // bridge refuses to serve it.
        result = try run(as: alice, "timeout 10 dbus-run-session -- '\(bridge.path)' --system-socket '\(daemon.socket)'")
        #expect(result.status != 0 && result.status != 124, "the bridge served a bus alice started: \(result.status)")
        #expect(result.stderr.contains("did not start"), "\(result.stderr)")

        // In alice's keychain in the system daemon, as secret-tool's item, which she sees as
        // its owner.
        let keychainctl = "'\(CommandRunner.binary.path)' --system-socket '\(daemon.socket)'"
        result = try run(
            as: alice,
            "printf '1234\\n' | \(keychainctl) passcode set && "
                + "printf '1234\\n' | \(keychainctl) owner login >/dev/null && \(keychainctl) dump-keychain")
        #expect(result.stdout.contains("Mail") && result.stdout.contains("/usr/bin/secret-tool"), "\(result.stdout)")
        #expect(!result.stdout.contains("imap-password"))

        // Another app of alice's finds it locked.
        result = try run(
            as: alice,
            """
            /usr/bin/python3 -c "
            import secretstorage
            items = list(secretstorage.search_items(secretstorage.dbus_init(), {'service': 'imap'}))
            print(len(items), items[0].is_locked())"
            """)
        #expect(result.stdout == "1 True\n", "\(result.stdout) \(result.stderr)")

        // bob on alice's bus: her bridge serves uid \(alice.uid) alone.
        result = try run(as: bob, "secret-tool lookup service imap user alice")
        #expect(result.stdout.isEmpty && result.status != 0, "\(result.stdout)")
    }
}
