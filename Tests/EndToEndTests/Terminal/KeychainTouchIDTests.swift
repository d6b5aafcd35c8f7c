import Foundation
import Testing

/// Apple's KeychainTouchID sample, as `keychainctl` commands: add an item protected by user
/// presence, query it (prompts), update it (prompts), delete it.
@Suite struct KeychainTouchIDTests {
    /// Adds the sample's item: "SampleService", protected by user presence.
    static func addSampleItem(_ shell: CommandRunner, account: String, secret: String = "SECRET_PASSWORD_TEXT") throws {
        let options = ["--access-control", "userPresence"]
        #expect(try shell.addPassword("SampleService", account: account, options, secret: secret))
    }

    @Test func addQueryUpdateDelete() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        // Add Item: no prompt.
        try Self.addSampleItem(shell, account: "sample")
        // Attributes need no authentication; data without a terminal is refused, never leaked.
        #expect(
            try shell.run(["find-generic-password", "-s", "SampleService"]).stdout.contains("\"acct\"<blob>=\"sample\"")
        )
        let refused = try shell.run(["find-generic-password", "-s", "SampleService", "-w"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("OSStatus -25308"))
        #expect(!refused.stdout.contains("SECRET"))

        // Query for Item: the sheet, a touch from another terminal, the secret.
        var terminal = try PseudoTerminal(
            CommandRunner.binary, ["find-generic-password", "-s", "SampleService", "-w"], environment: shell.environment
        )
        #expect(terminal.expect("Authenticate to access service password"))
        #expect(terminal.expect("Touch the fingerprint sensor."))
        // Before the secret comes, the process is out of core dumps and debuggers: it hardened
        // on the reply to its first request, the count of matches.
        #expect(terminal.coreFilesAreOff)
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(terminal.wait() == 0)
        #expect(terminal.screen.contains("SECRET_PASSWORD_TEXT"))

        // Update Item: the new secret at a hidden prompt, then the sheet, then the passcode fallback.
        terminal = try PseudoTerminal(
            CommandRunner.binary,
            ["add-generic-password", "-s", "SampleService", "-a", "sample", "-U", "--access-control", "userPresence"],
            environment: shell.environment)
        #expect(terminal.expect("Secret: "))
        terminal.type("UPDATED_SECRET_PASSWORD_TEXT\r")
        #expect(terminal.expect("Secret again: "))
        terminal.type("UPDATED_SECRET_PASSWORD_TEXT\r")
        #expect(terminal.expect("Authenticate to update your password"))
        terminal.type("\r")
        #expect(terminal.expect("Passcode: "))
        terminal.type("1234\r")
        #expect(terminal.wait() == 0)
        #expect(!terminal.screen.contains("UPDATED_SECRET_PASSWORD_TEXT"))

        terminal = try PseudoTerminal(
            CommandRunner.binary, ["find-generic-password", "-s", "SampleService", "-w"], environment: shell.environment
        )
        #expect(terminal.expect("Touch the fingerprint sensor."))
        terminal.type("\u{1b}")
        #expect(terminal.wait() == 1)
        #expect(terminal.screen.contains("OSStatus -128"))

        terminal = try PseudoTerminal(
            CommandRunner.binary, ["find-generic-password", "-s", "SampleService", "-w"], environment: shell.environment
        )
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(terminal.wait() == 0)
        #expect(terminal.screen.contains("UPDATED_SECRET_PASSWORD_TEXT"))

        // Delete Item: no prompt.
        #expect(try shell.run(["delete-generic-password", "-s", "SampleService"]).status == 0)
        #expect(try shell.run(["find-generic-password", "-s", "SampleService"]).status == 44)
    }

    @Test func accessControlCombinationsAreCheckedByTheTool() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        // Two constraints without a conjunction must both be met, as on iOS.
        for (index, flags) in [
            "biometryAny", "biometryCurrentSet", "devicePasscode", "biometryAny,or,devicePasscode",
            "biometryCurrentSet,and,devicePasscode", "biometryAny,devicePasscode",
        ].enumerated() {
            #expect(
                try shell.run(
                    ["add-generic-password", "-s", "svc", "-a", "a\(index)", "--access-control", flags], input: "x"
                ).status == 0, "\(flags)")
        }
        let invalid = try shell.run(
            [
                "add-generic-password", "-s", "svc", "-a", "bad", "--access-control",
                "biometryAny,biometryCurrentSet,or",
            ], input: "x")
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("OSStatus -50"))
    }
}
