import Foundation
import Testing

/// The command line's part of keeping state safe (issue: "Bad input from the command line",
/// "Many processes, one keychain", and the explicit erase).
@Suite struct StateSafetyCommandTests {
    @Test func lookingDoesNotCreateAKeychain() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let status = try shell.run(["status"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("passcode: not set"))
        #expect(status.stdout.contains("none yet"))
        #expect(try shell.run(["find-generic-password", "-s", "x"]).status == 44)
        #expect(try shell.run(["dump-keychain"]).status == 0)
        #expect(try shell.run(["lock"]).status == 0)
        #expect(try shell.run(["biometry", "status"]).status == 0)
        #expect(
            !FileManager.default.fileExists(atPath: shell.keychainDirectory.path),
            "a read-only command created the keychain")
        #expect(try shell.run(["add-generic-password", "-s", "x", "-a", "y"], input: "s").status == 0)
        #expect(FileManager.default.fileExists(atPath: shell.keychainDirectory.appendingPathComponent("keybag").path))
    }

    @Test func deletingSeveralItemsNeedsAll() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        for account in ["a", "b", "c"] {
            #expect(try shell.run(["add-generic-password", "-s", "svc", "-a", account], input: "s").status == 0)
        }
        let refused = try shell.run(["delete-generic-password"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("3 items match; nothing was deleted"))
        #expect(try shell.run(["delete-generic-password", "-s", "svc", "-a", "a"]).status == 0)
        let all = try shell.run(["delete-generic-password", "-s", "svc", "--all"])
        #expect(all.status == 0)
        #expect(all.stderr.contains("deleted 2 items"))
        #expect(try shell.run(["find-generic-password", "-s", "svc"]).status == 44)
    }

    @Test func removingThePasscodeSaysHowManyItemsGoAndNeedsConfirmation() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        #expect(
            try shell.addPassword(
                "svc", account: "device", ["--accessible", "WhenPasscodeSetThisDeviceOnly"], secret: "s"))
        let refused = try shell.run(["passcode", "remove"], input: "1234\n")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("deletes 1 item"))
        #expect(refused.stderr.contains("--yes"))
        #expect(try shell.run(["find-generic-password", "-a", "device"]).status == 0, "nothing was deleted")
        let removed = try shell.run(["passcode", "remove", "--yes"], input: "1234\n")
        #expect(removed.status == 0)
        #expect(removed.stderr.contains("deleted 1 item"))
        #expect(try shell.run(["find-generic-password", "-a", "device"]).status == 44)
    }

    @Test func onATerminalRemovingThePasscodeAsksFirst() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        #expect(
            try shell.addPassword(
                "svc", account: "device", ["--accessible", "WhenPasscodeSetThisDeviceOnly"], secret: "s"))
        let declined = try PseudoTerminal(CommandRunner.binary, ["passcode", "remove"], environment: shell.environment)
        #expect(declined.expect("deletes 1 item"))
        #expect(declined.expect("[y/N] "))
        declined.type("n\r")
        #expect(declined.wait() == 1)
        #expect(declined.screen.contains("nothing was changed"))
        #expect(try shell.run(["find-generic-password", "-a", "device"]).status == 0)

        let accepted = try PseudoTerminal(CommandRunner.binary, ["passcode", "remove"], environment: shell.environment)
        #expect(accepted.expect("[y/N] "))
        accepted.type("y\r")
        #expect(accepted.expect("Current passcode: "))
        accepted.type("1234\r")
        #expect(accepted.wait() == 0)
        #expect(accepted.screen.contains("deleted 1 item"))
        #expect(try shell.run(["find-generic-password", "-a", "device"]).status == 44)
    }

    @Test func secretsOnStandardInputAreBoundedAndEmptyOnesRefused() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        // 200 MB offered: keychainctl stops reading past the limit, so `head` dies of SIGPIPE
        // (141) instead of writing it all; before, the process grew to 615 MB first.
        let big = try shell.script(
            "head -c 200000000 /dev/zero | \"$KEYCHAINCTL\" add-generic-password -s big -a x; echo \"${PIPESTATUS[@]}\""
        )
        #expect(big.stdout == "141 1\n")
        #expect(big.stderr.contains("errSecDataTooLarge"))
        let longLine = try shell.script(
            "head -c 200000000 /dev/zero | \"$KEYCHAINCTL\" passcode set; echo \"${PIPESTATUS[@]}\"")
        #expect(longLine.stdout == "141 1\n")
        #expect(longLine.stderr.contains("errSecDataTooLarge"))

        let empty = try shell.run(["add-generic-password", "-s", "empty", "-a", "x"], input: "")
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("--allow-empty"))
        #expect(
            try shell.run(["add-generic-password", "-s", "empty", "-a", "x", "--allow-empty"], input: "").status == 0)
        #expect(try shell.run(["find-generic-password", "-s", "empty", "-w"]).stdout == "\n")
    }

    @Test func argumentsThatAreNotUTF8AreRefused() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        // Before, `-s $'\xfe'` became U+FFFD and found the item stored under `-s $'\xff'`.
        #expect(try shell.run(["add-generic-password", "-s", "\u{FFFD}", "-a", "x"], input: "the secret").status == 0)
        let result = try shell.script("\"$KEYCHAINCTL\" find-generic-password -s $'\\xfe' -w")
        #expect(result.status == 64)
        #expect(result.stderr.contains("not valid UTF-8"))
        #expect(!result.stdout.contains("the secret"))
    }

    @Test func thirtyTwoFirstUsersAtOnceAllSucceed() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let runs = try (0..<32).map { index in
            let running = try shell.launch(["add-generic-password", "-s", "race", "-a", "account\(index)"])
            return (index, running)
        }
        for (index, running) in runs {
            running.stdin.fileHandleForWriting.write(Data("secret-\(index)".utf8))
            try running.stdin.fileHandleForWriting.close()
        }
        for (index, running) in runs {
            let output = running.finish()
            #expect(output.status == 0, "add \(index): \(output.stderr)")
            #expect(!output.stderr.contains("locked"), "add \(index): \(output.stderr)")
        }
        let dump = try shell.run(["dump-keychain"])
        #expect(dump.stdout.components(separatedBy: "\"svce\"<blob>=\"race\"").count - 1 == 32)
    }

    @Test func eraseAsksForThePasscodeAndIsTheWayOutOfAnUnopenableKeychain() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        for account in ["a", "b"] {
            #expect(try shell.run(["add-generic-password", "-s", "svc", "-a", account], input: "s").status == 0)
        }
        let wrong = try shell.run(["erase"], input: "0000\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("deletes 2 items"))
        #expect(wrong.stderr.contains("errSecAuthFailed"))
        let erased = try shell.run(["erase"], input: "1234\n")
        #expect(erased.status == 0)
        #expect(erased.stderr.contains("erased 2 items"))
        #expect(try shell.run(["status"]).stdout.contains("passcode: not set"))

        #expect(try shell.run(["add-generic-password", "-s", "svc", "-a", "c"], input: "s").status == 0)
        #expect(try shell.run(["erase"]).stderr.contains("--yes"))
        try FileManager.default.removeItem(at: shell.keychainDirectory.appendingPathComponent("keybag"))
        let refused = try shell.run(["find-generic-password", "-s", "svc"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("errSecDecode"))
        #expect(refused.stderr.contains("keychainctl erase"))
        #expect(try shell.run(["erase"]).status == 1)
        let recovered = try shell.run(["erase", "--yes"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stderr.contains("removed the keychain's files (1 item)"))
        #expect(try shell.run(["add-generic-password", "-s", "svc", "-a", "d"], input: "s").status == 0)
    }
}
