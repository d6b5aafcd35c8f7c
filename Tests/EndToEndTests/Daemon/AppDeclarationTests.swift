import Foundation
import Testing

/// An app declared with Apple's entitlements (`keychainctl apps declare`, approved in an owner
/// session) belongs to the groups an iOS app with those entitlements has, through keychaind.
@Suite struct AppDeclarationTests {
    private static let entitlements = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>application-identifier</key>
            <string>ABCDE12345.com.example.app</string>
            <key>keychain-access-groups</key>
            <array>
                <string>ABCDE12345.com.example.shared</string>
            </array>
            <key>com.apple.security.application-groups</key>
            <array>
                <string>group.com.example.suite</string>
            </array>
        </dict>
        </plist>
        """

    @Test func aDeclaredAppStoresInItsFirstGroupAndKeepsWhatItHad() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let app = try daemon.copyOfKeychainctl(named: "declared-app")
        #expect(try daemon.run(app, ["add-generic-password", "-s", "before", "-a", "a"], input: "OLD").status == 0)
        let file = daemon.shell.home.appendingPathComponent("App.entitlements")
        try Self.entitlements.write(to: file, atomically: true, encoding: .utf8)

        // Declaring needs the owner's passcode.
        let refused = try daemon.shell.run(["apps", "declare", app.path, "--entitlements", file.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("OSStatus -34018"), "\(refused.stderr)")
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        let declared = try daemon.shell.run(["apps", "declare", app.path, "--entitlements", file.path])
        #expect(declared.status == 0, "\(declared.stderr)")
        #expect(
            try daemon.shell.run(["apps", "list"]).stdout.contains(
                "\(app.path): declared ABCDE12345.com.example.app; groups ABCDE12345.com.example.shared, "
                    + "ABCDE12345.com.example.app, group.com.example.suite"
            ))

        // Without kSecAttrAccessGroup an item lands in the first keychain-access-groups entry,
        // and the app still finds what it stored under its path before.
        #expect(try daemon.run(app, ["add-generic-password", "-s", "after", "-a", "a"], input: "NEW").status == 0)
        let found = try daemon.run(app, ["find-generic-password", "-s", "after"])
        #expect(found.stdout.contains("\"agrp\"<blob>=\"ABCDE12345.com.example.shared\""), "\(found.stdout)")
        #expect(try daemon.run(app, ["find-generic-password", "-s", "before", "-w"]).stdout == "OLD\n")
        // Hard-coded groups: its identifier is one of its groups; another app's is not.
        #expect(
            try daemon.run(
                app, ["find-generic-password", "-s", "after", "--access-group", "ABCDE12345.com.example.app"]
            ).status == 44)
        #expect(
            try daemon.run(
                app, ["find-generic-password", "-s", "after", "--access-group", "ABCDE12345.com.example.shared", "-w"]
            ).stdout == "NEW\n")
        #expect(
            try daemon.run(app, ["find-generic-password", "-s", "after", "--access-group", "ABCDE12345.com.other"])
                .stderr.contains("OSStatus -34018"))
        // Its application group is an access group too, after its identifier, as on iOS.
        let inAppGroup = ["-s", "suite", "-a", "a", "--access-group", "group.com.example.suite"]
        #expect(try daemon.run(app, ["add-generic-password"] + inAppGroup, input: "SUITE").status == 0)
        #expect(try daemon.run(app, ["find-generic-password", "-s", "suite", "-w"]).stdout == "SUITE\n")

        // Another app sees the shared group only once it too is declared in it.
        let widget = try daemon.copyOfKeychainctl(named: "widget")
        #expect(try daemon.run(widget, ["find-generic-password", "-s", "after", "-w"]).status == 44)
        #expect(
            try daemon.shell.run([
                "apps", "declare", widget.path, "--identifier", "ABCDE12345.com.example.widget", "--access-group",
                "ABCDE12345.com.example.shared",
            ]).status == 0)
        #expect(try daemon.run(widget, ["find-generic-password", "-s", "after", "-w"]).stdout == "NEW\n")

        // Undeclared, the app is its path again: the shared item is out of its reach, its own stays.
        #expect(try daemon.shell.run(["apps", "undeclare", app.path]).status == 0)
        #expect(try daemon.run(app, ["find-generic-password", "-s", "after", "-w"]).status == 44)
        #expect(try daemon.run(app, ["find-generic-password", "-s", "before", "-w"]).stdout == "OLD\n")
    }

    @Test func aDeclarationThatCouldNotBeApplesIsRefused() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        let app = try daemon.copyOfKeychainctl(named: "app")
        let file = daemon.shell.home.appendingPathComponent("Unexpanded.entitlements")
        try Self.entitlements.replacingOccurrences(
            of: "ABCDE12345.com.example.shared", with: "$(AppIdentifierPrefix)com.example.shared"
        )
        .write(to: file, atomically: true, encoding: .utf8)
        let unexpanded = try daemon.shell.run(["apps", "declare", app.path, "--entitlements", file.path])
        #expect(unexpanded.status == 1)
        #expect(unexpanded.stderr.contains("build variable"), "\(unexpanded.stderr)")
        for group in ["/usr/bin/other-app", "flatpak:org.example.App", ""] {
            let refused = try daemon.shell.run([
                "apps", "declare", app.path, "--identifier", "ABCDE12345.com.example.app", "--access-group", group,
            ])
            #expect(refused.status == 1 && refused.stderr.contains("OSStatus -50"), "\(group): \(refused.stderr)")
        }
        let noIdentifier = try daemon.shell.run(["apps", "declare", app.path, "--access-group", "g"])
        #expect(noIdentifier.status == 1 && noIdentifier.stderr.contains("--identifier"), "\(noIdentifier.stderr)")
        #expect(try daemon.shell.run(["apps", "list"]).stdout.isEmpty)
    }
}
