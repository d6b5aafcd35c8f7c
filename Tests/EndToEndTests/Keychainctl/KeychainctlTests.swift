import Foundation
import Testing

/// `keychainctl` as a user drives it: the built binary, its exit codes, its output.
@Suite struct KeychainctlTests {
    /// `find-generic-password` in its plain forms is read without ArgumentParser's command tree
    /// (``GenericPasswordLookup``); every other spelling goes through the parser. Both give the
    /// same output, status and errors.
    @Test func aLookupGivesTheSameAnswerWhicheverParserReadsIt() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        #expect(
            try shell.run(["add-generic-password", "-s", "github.com", "-a", "alice"], input: "hunter2").status == 0)
        let attributes = try [
            ["find-generic-password", "-s", "github.com"],
            ["find-generic-password", "-s", "github.com", "-a", "alice", "-a", "alice"],
        ].map { try shell.run($0) }
        #expect(attributes[0].status == 0 && attributes[0].stdout.contains("\"acct\"<blob>=\"alice\""))
        #expect(attributes[0].stdout == attributes[1].stdout)
        // keychainctl's own group: its executable through keychaind.
        let group = try #require(
            attributes[0].stdout.split(separator: "\n").first { $0.contains("\"agrp\"") }?.split(
                separator: "=", maxSplits: 1
            ).last?.dropFirst().dropLast())
        let plain = ["find-generic-password", "-w", "-a", "alice", "-s", "github.com", "--access-group", String(group)]
        let parsed = ["find-generic-password", "-s", "github.com", "-a", "alice", "-w", "--access-group=\(group)"]
        for arguments in [plain, parsed] {
            let out = try shell.run(arguments)
            #expect(out.status == 0 && out.stdout == "hunter2\n" && out.stderr.isEmpty, "\(arguments): \(out)")
        }
        let missing = try [
            ["find-generic-password", "-s", "gitlab.com", "-w"], ["find-generic-password", "-s=gitlab.com", "-w"],
        ].map { try shell.run($0) }
        #expect(missing[0].status == 44 && missing[0].stderr.contains("OSStatus -25300"), "\(missing[0])")
        #expect(missing[1].status == missing[0].status && missing[1].stderr == missing[0].stderr, "\(missing[1])")
        // A value that looks like an option, an unknown option: the parser's usage errors.
        #expect(try shell.run(["find-generic-password", "-a", "-w"]).status == 64)
        #expect(try shell.run(["find-generic-password", "-s", "github.com", "-x", "1"]).status == 64)
    }

    @Test func genericPasswordLifeCycle() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        var out = try shell.run(
            ["add-generic-password", "-s", "github.com", "-a", "alice", "-l", "GitHub", "-j", "work"],
            input: "hunter2\n")
        #expect(out.status == 0, "\(out.stderr)")
        out = try shell.run(["find-generic-password", "-s", "github.com"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("\"acct\"<blob>=\"alice\""))
        #expect(out.stdout.contains("\"labl\"<blob>=\"GitHub\""))
        #expect(!out.stdout.contains("hunter2"))
        out = try shell.run(["find-generic-password", "-s", "github.com", "-a", "alice", "-w"])
        #expect(out.stdout == "hunter2\n")

        out = try shell.run(["add-generic-password", "-s", "github.com", "-a", "alice"], input: "other")
        #expect(out.status == 1)
        #expect(out.stderr.contains("keychainctl: error:"))
        #expect(out.stderr.contains("OSStatus -25299"))
        #expect(out.stderr.contains("keychainctl: hint: add -U"))
        out = try shell.run(["add-generic-password", "-s", "github.com", "-a", "alice", "-U"], input: "correct horse")
        #expect(out.status == 0)
        #expect(try shell.run(["find-generic-password", "-s", "github.com", "-w"]).stdout == "correct horse\n")

        #expect(try shell.run(["delete-generic-password", "-s", "github.com", "-a", "alice"]).status == 0)
        out = try shell.run(["find-generic-password", "-s", "github.com"])
        #expect(out.status == 44)
        #expect(out.stderr.contains("OSStatus -25300"))
        #expect(try shell.run(["delete-generic-password", "-s", "github.com"]).status == 44)
        #expect(
            FileManager.default.fileExists(atPath: shell.keychainDirectory.appendingPathComponent("keychain.db").path))
    }

    @Test func internetPasswordLifeCycle() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let key = ["-s", "example.com", "-a", "bob", "-r", "https", "-P", "443", "-p", "/login"]
        #expect(try shell.run(["add-internet-password"] + key, input: "pw1").status == 0)
        #expect(
            try shell.run(
                ["add-internet-password", "-s", "example.com", "-a", "bob", "-r", "htps", "-P", "8443"], input: "pw2"
            ).status == 0)
        #expect(try shell.run(["add-internet-password"] + key, input: "pw3").status == 1)
        var out = try shell.run(["find-internet-password", "-s", "example.com", "-P", "443", "-w"])
        #expect(out.stdout == "pw1\n")
        out = try shell.run(["find-internet-password", "-s", "example.com", "-P", "443"])
        #expect(out.stdout.contains("\"ptcl\"<blob>=\"htps\""))
        #expect(out.stdout.contains("\"port\"<sint32>=443"))
        #expect(try shell.run(["delete-internet-password", "-s", "example.com"]).stderr.contains("2 items match"))
        #expect(try shell.run(["delete-internet-password", "-s", "example.com", "--all"]).status == 0)
        #expect(try shell.run(["find-internet-password", "-s", "example.com"]).status == 44)
        #expect(try shell.run(["add-internet-password", "-s", "x", "-a", "y", "-r", "gopher"], input: "pw").status != 0)
    }

    @Test func dumpShowsEveryItemButNoSecret() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        try shell.run(["add-generic-password", "-s", "svc", "-a", "one"], input: "secret-one")
        try shell.run(["add-internet-password", "-s", "host", "-a", "two"], input: "secret-two")
        let out = try shell.run(["dump-keychain"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("class: \"genp\""))
        #expect(out.stdout.contains("class: \"inet\""))
        #expect(!out.stdout.contains("secret-one") && !out.stdout.contains("secret-two"))
    }

    @Test func passcodeLockAndUnlockFromStandardInput() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        #expect(try shell.run(["status"]).stdout.contains("passcode: not set"))
        #expect(try shell.run(["passcode", "set"], input: "1234\n").status == 0)
        try shell.run(["add-generic-password", "-s", "svc", "-a", "wu"], input: "when-unlocked")
        try shell.run(
            ["add-generic-password", "-s", "svc", "-a", "afu", "--accessible", "AfterFirstUnlock"], input: "after-first"
        )
        try shell.run(
            ["add-generic-password", "-s", "svc", "-a", "pc", "--accessible", "WhenPasscodeSetThisDeviceOnly"],
            input: "passcode-set")
        var out = try shell.run(["status"])
        #expect(out.stdout.contains("passcode: set"))
        #expect(out.stdout.contains("state: unlocked"))

        #expect(try shell.run(["lock"]).status == 0)
        #expect(try shell.run(["status"]).stdout.contains("state: locked"))
        out = try shell.run(["find-generic-password", "-a", "wu", "-w"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("OSStatus -25308"))
        #expect(try shell.run(["find-generic-password", "-a", "afu", "-w"]).stdout == "after-first\n")

        out = try shell.run(["unlock"], input: "0000\n")
        #expect(out.status == 1)
        #expect(out.stderr.contains("OSStatus -25293"))
        #expect(try shell.run(["status"]).stdout.contains("failed passcode attempts: 1"))
        #expect(try shell.run(["unlock"], input: "1234\n").status == 0)
        #expect(try shell.run(["find-generic-password", "-a", "wu", "-w"]).stdout == "when-unlocked\n")
        #expect(try shell.run(["status"]).stdout.contains("failed passcode attempts: 0"))

        #expect(try shell.run(["passcode", "change"], input: "1234\nabcd\n").status == 0)
        #expect(try shell.run(["passcode", "remove", "--yes"], input: "1234\n").status == 1)
        #expect(try shell.run(["passcode", "remove", "--yes"], input: "abcd\n").status == 0)
        #expect(try shell.run(["find-generic-password", "-a", "pc"]).status == 44)
        #expect(try shell.run(["find-generic-password", "-a", "wu", "-w"]).stdout == "when-unlocked\n")
        #expect(
            try shell.run(
                ["add-generic-password", "-s", "svc", "-a", "pc2", "--accessible", "WhenPasscodeSetThisDeviceOnly"],
                input: "x"
            ).stderr.contains("OSStatus -25291"))
    }

    @Test func hiddenPromptsOnATerminalNeverEchoTheSecret() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let set = try PseudoTerminal(CommandRunner.binary, ["passcode", "set"], environment: shell.environment)
        #expect(set.expect("New passcode: "))
        set.type("9753\r")
        #expect(set.expect("Confirm new passcode: "))
        set.type("9753\r")
        #expect(set.wait() == 0)
        #expect(!set.screen.contains("9753"))

        let add = try PseudoTerminal(
            CommandRunner.binary, ["add-generic-password", "-s", "svc", "-a", "me"], environment: shell.environment)
        #expect(add.expect("Secret: "))
        add.type("typed-secret\r")
        // Asked twice, as a new passcode is: a typo would be stored unseen (issue 53).
        #expect(add.expect("Secret again: "))
        add.type("typed-secret\r")
        #expect(add.wait() == 0)
        #expect(!add.screen.contains("typed-secret"))
        #expect(try shell.run(["find-generic-password", "-a", "me", "-w"]).stdout == "typed-secret\n")

        let typo = try PseudoTerminal(
            CommandRunner.binary, ["add-generic-password", "-s", "svc", "-a", "typo"], environment: shell.environment)
        #expect(typo.expect("Secret: "))
        typo.type("typed-secret\r")
        #expect(typo.expect("Secret again: "))
        typo.type("typed-secrte\r")
        #expect(typo.wait() != 0 && typo.screen.contains("the two secrets differ"), "\(typo.screen)")
        #expect(try shell.run(["find-generic-password", "-a", "typo", "-w"]).status == 44)

        let mismatch = try PseudoTerminal(CommandRunner.binary, ["passcode", "change"], environment: shell.environment)
        #expect(mismatch.expect("Current passcode: "))
        mismatch.type("9753\r")
        #expect(mismatch.expect("New passcode: "))
        mismatch.type("1111\r")
        #expect(mismatch.expect("Confirm new passcode: "))
        mismatch.type("2222\r")
        #expect(mismatch.wait() == 1)
        #expect(mismatch.screen.contains("the two passcodes differ"))

        try shell.run(["lock"])
        let unlock = try PseudoTerminal(CommandRunner.binary, ["unlock"], environment: shell.environment)
        #expect(unlock.expect("Passcode: "))
        unlock.type("9753\r")
        #expect(unlock.wait() == 0)
        #expect(try shell.run(["status"]).stdout.contains("state: unlocked"))
    }
}
