import Foundation
import Testing

extension ReadmeTests {
    /// Issue 53: the keychaind block, run as written in a new keychain with a passcode (the
    /// owner's lines type it). Its `systemctl --user` line needs a login with a systemd user
    /// manager, which the test machine has not: the test checks that it enables the very units
    /// `daemon install --user` wrote, and that install prints the same line.
    @Test func theDaemonBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "keychainctl daemon install --user")
        try #require(lines.count == 6, "\(lines)")
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let bin = try Self.installed(["keychainctl"], in: shell)
        // The app the block declares, and its Apple entitlements, in the directory it runs in.
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: bin.appendingPathComponent("app-one").path)
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>application-identifier</key><string>ABCDE12345.com.example.app-one</string>
        <key>keychain-access-groups</key><array><string>ABCDE12345.com.example.shared</string></array>
        </dict></plist>
        """.write(to: shell.home.appendingPathComponent("App.entitlements"), atomically: true, encoding: .utf8)
        let prefix = "set -e; cd '\(shell.home.path)'; export PATH='\(bin.path)':\"$PATH\" HOME='\(shell.home.path)'\n"

        var result = try shell.script(prefix + lines[0])
        #expect(result.status == 0 && result.stdout.contains("keychaind"), "\(result.stdout)\(result.stderr)")
        result = try shell.script(prefix + lines[1])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(lines[2].components(separatedBy: "  #")[0]), "\(result.stdout)")
        let units =
            shell.environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? shell.home.appendingPathComponent(".config")
        #expect(
            FileManager.default.fileExists(atPath: units.appendingPathComponent("systemd/user/keychaind.socket").path),
            "\(result.stdout)")
        #expect(lines[2].hasSuffix("systemctl --user enable --now keychaind.socket"))
        for line in lines[3...] {
            let typed = line.hasPrefix("keychainctl owner login") ? "printf '1234\\n' | " : ""
            if line.hasPrefix("keychainctl daemon stop") {
                // Declared, before the stop ends the owner session with the daemon.
                result = try shell.script(prefix + "keychainctl apps list")
                #expect(result.stdout.contains("ABCDE12345.com.example.app-one"), "\(result.stdout)\(result.stderr)")
            }
            result = try shell.script(prefix + typed + line)
            #expect(result.status == 0, "\(line): \(result.stdout)\(result.stderr)")
        }
        #expect(result.stdout.contains("stopped"), "\(result.stdout)")
    }

    /// Issue 53: the join block, on two keychains of the test's (a laptop in the circle, a
    /// desktop joining), each in an owner session as the block says, over a bare repository
    /// standing for `git@host:me/keychain.git`; `123456` is the code the desktop shows.
    @Test func theJoinBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "keychainctl sync join git@host")
        try #require(lines.count == 5, "\(lines)")
        let (laptop, desktop) = (
            try CommandRunner.withPasscode(simulator: false), try CommandRunner.withPasscode(simulator: false)
        )
        defer {
            laptop.cleanUp()
            desktop.cleanUp()
        }
        let remote = laptop.home.appendingPathComponent("keychain.git").path
        func run(_ line: String, on machine: CommandRunner) throws -> CommandRunner.Output {
            try machine.script("export PATH='\(machine.home.path)/bin':\"$PATH\"\n" + line)
        }
        for machine in [laptop, desktop] {
            _ = try Self.installed(["keychainctl"], in: machine)
            #expect(try run("printf '1234\\n' | keychainctl owner login", on: machine).status == 0)
        }
        for line in ["git init -q --bare '\(remote)'", "keychainctl sync setup '\(remote)' --name laptop"] {
            let result = try run(line, on: laptop)
            #expect(result.status == 0, "\(line): \(result.stderr)")
        }
        #expect(try laptop.addPassword("wifi", account: "home", ["--synchronizable"], secret: "hunter2"))
        #expect(try run("keychainctl sync now", on: laptop).status == 0)
        var code: String?
        for line in lines {
            let machine = line.hasPrefix("desktop$") ? desktop : laptop
            let command = String(line.drop { $0 != "$" }.dropFirst()).trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "git@host:me/keychain.git", with: remote)
                .replacingOccurrences(of: "123456", with: code ?? "123456")
            let result = try run(command, on: machine)
            #expect(result.status == 0, "\(command): \(result.stdout)\(result.stderr)")
            if let shown = SyncJoinCode.shown(result.stdout) { code = shown }
        }
        #expect(code != nil, "the desktop showed no code")
        let read = try desktop.script(
            "export PATH='\(desktop.home.path)/bin':\"$PATH\"\nkeychainctl sync now >/dev/null; "
                + "keychainctl find-generic-password -s wifi -a home -w")
        #expect(read.stdout == "hunter2\n", "\(read.stdout)\(read.stderr)")
    }
}
