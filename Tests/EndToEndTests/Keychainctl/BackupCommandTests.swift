import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl backup` and `restore` as a user runs them: through keychaind, in an owner
/// session, onto another machine's keychain; with a count and a bar on a terminal and nothing
/// on standard error in a script.
@Suite struct BackupCommandTests {
    @Test func aBackupThroughKeychaindMovesTheMigratableItemsToAnotherMachine() throws {
        let source = try CommandRunner.withPasscode(simulator: false)
        defer { source.cleanUp() }
        #expect(try source.addPassword("mail", account: "me", secret: "mail secret"))
        #expect(
            try source.addPassword(
                "vpn", account: "me", ["--accessible", "WhenUnlockedThisDeviceOnly"], secret: "vpn secret"))
        let file = source.home.appendingPathComponent("keychain.backup")

        let refused = try source.run(["backup", file.path], input: "backup password\n")
        #expect(refused.status != 0 && refused.stderr.contains("owner session"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))

        #expect(try source.run(["owner", "login"], input: "1234\n").status == 0)
        let made = try source.run(["backup", file.path], input: "backup password\n")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("1 items for any device, 1 for this device only; 0 left out"), "\(made.stdout)")
        #expect(made.stderr.isEmpty, "a script saw progress: \(made.stderr)")
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let bytes = try Data(contentsOf: file)
        #expect(bytes.range(of: Data("mail secret".utf8)) == nil && bytes.range(of: Data("vpn secret".utf8)) == nil)

        // Another machine: a keychain of its own, so another device secret, and its own keychaind.
        let target = try CommandRunner.withPasscode(simulator: false)
        defer { target.cleanUp() }
        #expect(try target.run(["owner", "login"], input: "1234\n").status == 0)
        let wrong = try target.run(["restore", file.path], input: "not the password\n")
        #expect(wrong.status != 0 && wrong.stderr.contains("OSStatus -25293"), "\(wrong.stderr)")
        // Issue 53: no attempt is counted for a backup's password, and erasing the keychain mends
        // no file: neither hint is given for a wrong password or a cut-off file.
        #expect(!wrong.stderr.contains("failed attempts") && !wrong.stderr.contains("erase"), "\(wrong.stderr)")
        let cut = file.deletingLastPathComponent().appendingPathComponent("cut-off.kcbackup")
        try bytes.prefix(bytes.count / 2).write(to: cut)
        let cutOff = try target.run(["restore", cut.path], input: "backup password\n")
        #expect(cutOff.status != 0 && !cutOff.stderr.contains("erase"), "\(cutOff.stderr)")
        // A missing item, in plain words.
        let missing = try target.run(["find-generic-password", "-s", "mail", "-w"])
        #expect(missing.status == 44, "\(missing.stderr)")
        #expect(
            missing.stderr.contains("no generic password with that service that this program can see"),
            "\(missing.stderr)")

        let restored = try target.run(["restore", file.path], input: "backup password\n")
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(restored.stdout.contains("1 added, 0 replaced, 0 kept"), "\(restored.stdout)")
        #expect(restored.stdout.contains("1 items were sealed to the device that made the backup"))
        #expect(try target.run(["find-generic-password", "-s", "mail", "-w"]).stdout == "mail secret\n")
        #expect(try target.run(["find-generic-password", "-s", "vpn", "-w"]).status == 44)

        // A wrong passcode says its count, in the right number, and no hint repeats it.
        #expect(try target.run(["lock"]).status == 0)
        let wrongPasscode = try target.run(["unlock"], input: "9999\n")
        #expect(
            wrongPasscode.status != 0 && wrongPasscode.stderr.contains("(1 failed attempt)")
                && !wrongPasscode.stderr.contains("hint"), "\(wrongPasscode.stderr)")
    }

    @Test func aTerminalShowsACountAndABar() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["KEYCHAIN_MODE"] = "embedded"
        let shell = try CommandRunner(environment: environment)
        defer { shell.cleanUp() }
        for index in 1...3 { #expect(try shell.addPassword("svc", account: "a\(index)", secret: "s\(index)")) }
        let file = shell.home.appendingPathComponent("keychain.backup").path

        let backup = try PseudoTerminal(CommandRunner.binary, ["backup", file], environment: shell.environment)
        #expect(backup.expect("Backup password: "))
        backup.type("typed backup password\r")
        #expect(backup.expect("Confirm backup password: "))
        backup.type("typed backup password\r")
        #expect(backup.expect("backed up to"))
        #expect(backup.wait() == 0)
        #expect(
            backup.screen.contains("backing up 3 items [\(String(repeating: "#", count: 30))] 100%"), "\(backup.screen)"
        )
        #expect(!backup.screen.contains("typed backup password"))

        let restore = try PseudoTerminal(
            CommandRunner.binary, ["restore", file, "--replace"], environment: shell.environment)
        #expect(restore.expect("Backup password: "))
        restore.type("typed backup password\r")
        #expect(restore.expect("restored from"))
        #expect(restore.wait() == 0)
        #expect(
            restore.screen.contains("restoring 3 items [\(String(repeating: "#", count: 30))] 100%"),
            "\(restore.screen)")
        #expect(restore.screen.contains("0 added, 3 replaced, 0 kept"), "\(restore.screen)")
    }
}
