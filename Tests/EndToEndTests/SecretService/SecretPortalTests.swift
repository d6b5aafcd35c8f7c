import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Flatpak apps: a "sandboxed" app (bubblewrap with a `/.flatpak-info`, as Flatpak starts one)
/// asks the real xdg-desktop-portal for its secret (`org.freedesktop.portal.Secret`), and the
/// portal, routed to the keychain by a `.portal` file, asks the keychain's backend. Each app id
/// has its own secret, the same at every request and after a restart; a program of the user
/// that calls the backend itself, naming an app's id, is refused.
@Suite struct SecretPortalTests {
    /// Asks the portal for the secret on a pipe, as libsecret's file backend does in a sandbox,
    /// and prints the response code and the secret in hexadecimal.
    private static let client = """
        import os, sys
        from jeepney import DBusAddress, new_method_call, MatchRule, message_bus
        from jeepney.io.blocking import open_dbus_connection
        connection = open_dbus_connection(bus="SESSION", enable_fds=True)
        portal = DBusAddress("/org/freedesktop/portal/desktop", bus_name="org.freedesktop.portal.Desktop",
                             interface="org.freedesktop.portal.Secret")
        token = "t%d" % os.getpid()
        handle = "/org/freedesktop/portal/desktop/request/%s/%s" % (connection.unique_name[1:].replace(".", "_"), token)
        rule = MatchRule(type="signal", interface="org.freedesktop.portal.Request", member="Response", path=handle)
        connection.send_and_get_reply(message_bus.AddMatch(rule))
        read, write = os.pipe()
        with connection.filter(rule) as queue:
            connection.send_and_get_reply(
                new_method_call(portal, "RetrieveSecret", "ha{sv}", (write, {"handle_token": ("s", token)})))
            os.close(write)
            response = connection.recv_until_filtered(queue, timeout=20).body[0]
        print(response, os.read(read, 1000).hex())
        """

    /// A program of the user calling the backend itself with an app's id.
    private static let impostor = """
        import os
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
        connection = open_dbus_connection(bus="SESSION", enable_fds=True)
        backend = DBusAddress("/org/freedesktop/portal/desktop", bus_name="org.freedesktop.secrets",
                              interface="org.freedesktop.impl.portal.Secret")
        read, write = os.pipe()
        reply = connection.send_and_get_reply(new_method_call(
            backend, "RetrieveSecret", "osha{sv}",
            ("/org/freedesktop/portal/desktop/request/1_1/t", "org.example.Notes", write, {})))
        os.close(write)
        print(reply.header.fields.get(4, "answered"), os.read(read, 1000).hex())
        """

    @Test func eachSandboxedAppHasItsOwnSecretAndOnlyThePortalMayAsk() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let folder = service.bus.directory
        let portals = folder.appendingPathComponent("portals")
        try FileManager.default.createDirectory(at: portals, withIntermediateDirectories: true)
        try """
        [portal]
        DBusName=org.freedesktop.secrets
        Interfaces=org.freedesktop.impl.portal.Secret
        UseIn=keychain-test
        """.write(to: portals.appendingPathComponent("keychain.portal"), atomically: true, encoding: .utf8)
        for app in ["org.example.Notes", "org.example.Mail"] {
            try "[Application]\nname=\(app)\n\n[Instance]\ninstance-id=1\n".write(
                to: folder.appendingPathComponent("\(app).flatpak-info"), atomically: true, encoding: .utf8)
        }
        try Self.client.write(to: folder.appendingPathComponent("client.py"), atomically: true, encoding: .utf8)
        try Self.impostor.write(to: folder.appendingPathComponent("impostor.py"), atomically: true, encoding: .utf8)
        try service.bus.launchService(
            "/usr/libexec/xdg-desktop-portal", [],
            extra: service.shell.environment.merging(
                ["XDG_DESKTOP_PORTAL_DIR": portals.path, "XDG_CURRENT_DESKTOP": "keychain-test"]) { _, new in new })
        try service.bus.waitForOwner(of: "org.freedesktop.portal.Desktop")

        /// The app `app` in a sandbox of its own: a new root with the system read-only, /tmp (the
        /// bus) shared, and its /.flatpak-info, which the portal reads the app's id from.
        func sandboxed(_ app: String) throws -> String {
            let result = try service.script(
                """
                bwrap --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/lib /lib --symlink usr/lib64 /lib64 \\
                    --symlink usr/bin /bin --proc /proc --dev /dev --bind /tmp /tmp \\
                    --ro-bind '\(folder.path)/\(app).flatpak-info' /.flatpak-info \\
                    /usr/bin/python3 '\(folder.path)/client.py'
                """)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        let notes = try sandboxed("org.example.Notes")
        let fields = notes.split(separator: " ")
        #expect(fields.first == "0", "\(notes)")
        #expect(fields.last?.count == 128, "a 64-byte secret: \(notes)")
        #expect(try sandboxed("org.example.Notes") == notes)
        let mail = try sandboxed("org.example.Mail")
        #expect(mail.hasPrefix("0 ") && mail != notes, "\(mail)")

        // Not the portal: refused, and nothing written to its pipe.
        var result = try service.script("/usr/bin/python3 '\(folder.path)/impostor.py'")
        #expect(result.stdout == "org.freedesktop.DBus.Error.AccessDenied \n", "\(result.stdout) \(result.stderr)")

        // A restart of the bridge: the secret is the keychain's, the same as before.
        service.stopBridge()
        try service.startBridge()
        #expect(try sandboxed("org.example.Notes") == notes)

        // The owner sees the apps' secrets as the portal's items.
        result = try service.script(
            "printf '1234\\n' | \"$KEYCHAINCTL\" passcode set && printf '1234\\n' | \"$KEYCHAINCTL\" owner login "
                + ">/dev/null && \"$KEYCHAINCTL\" dump-keychain")
        #expect(result.stdout.contains("Flatpak app secret: org.example.Notes"), "\(result.stdout)")
        #expect(!result.stdout.contains(String(notes.dropFirst(2))), "the secret itself is not dumped")
    }
}
