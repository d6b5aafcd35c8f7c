import Foundation
import Testing

/// What people who know macOS's `security` and other command-line tools expect of `keychainctl`
/// (issue: "keychainctl habits").
@Suite struct CommandLineHabitsTests {
    @Test func versionAndMistypedCommands() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let version = try shell.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("keychainctl "))
        let typo = try shell.run(["find-generic-pasword", "-s", "x"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown command 'find-generic-pasword'; did you mean 'find-generic-password'?"))
        let unknown = try shell.run(["frobnicate"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown command 'frobnicate'"))
        #expect(!unknown.stderr.contains("did you mean"))
    }

    @Test func aSecretInTheArgumentsIsExplainedNotTaken() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        for command in ["add-generic-password", "add-internet-password"] {
            let result = try shell.run([command, "-s", "svc", "-a", "me", "-w", "hunter2"], input: "")
            #expect(result.status == 64)
            #expect(result.stderr.contains("never takes a secret from its arguments"))
        }
        #expect(try shell.run(["find-generic-password", "-s", "svc"]).status == 44, "nothing was stored")
    }

    @Test func usageNamesThePlaceholdersAndShowsRequiredOptionsAsRequired() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let add = try shell.run(["add-generic-password", "--help"]).stdout
        #expect(add.contains("keychainctl add-generic-password -s <service> -a <account> [-l <label>]"))
        let internet = try shell.run(["add-internet-password", "--help"]).stdout
        #expect(internet.contains("keychainctl add-internet-password -s <server> -a <account> [-r <protocol>]"))
        let find = try shell.run(["find-generic-password", "--help"]).stdout
        #expect(find.contains("[-s <service>] [-a <account>]"))
    }

    @Test func findingSeveralMatchesSaysHowMany() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        for account in ["a", "b", "c"] {
            #expect(
                try shell.run(["add-generic-password", "-s", "svc", "-a", account], input: "s-\(account)").status == 0)
        }
        let found = try shell.run(["find-generic-password", "-s", "svc", "-w"])
        #expect(found.status == 0)
        #expect(found.stdout == "s-a\n")
        #expect(found.stderr.contains("3 items match; showing the first"))
        #expect(!(try shell.run(["find-generic-password", "-s", "svc", "-a", "b"])).stderr.contains("items match"))
    }
}
