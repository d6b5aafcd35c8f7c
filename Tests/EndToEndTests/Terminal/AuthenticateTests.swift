import Foundation
import Testing

/// `keychainctl authenticate` at a terminal, with touches from "another terminal" (a second
/// keychainctl process), as a person would use the simulated sensor.
@Suite struct AuthenticateTests {
    func authenticate(_ shell: CommandRunner, policy: String) throws -> PseudoTerminal {
        let terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", policy, "--reason", "To add a new chore"],
            environment: shell.environment)
        #expect(terminal.expect("To add a new chore"))
        return terminal
    }

    @Test func statusSaysLoudlyWhenTheSimulatorIsOn() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        #expect(try shell.run(["status"]).stdout.contains("WARNING: THE SIMULATED FINGERPRINT SENSOR IS ON"))
        #expect(try shell.run(["biometry", "list"]).stdout == "thumb\n")
        #expect(try shell.run(["biometry", "simulate", "off"], input: "1234\n").status == 0)
        #expect(!(try shell.run(["status"]).stdout.contains("WARNING")))
        #expect(try shell.run(["biometry", "touch", "--matching"]).stderr.contains("OSStatus -25291"))
    }

    static let passcode = "Zq7vault4471"

    /// A keychain with ``passcode`` and its daemon running (started first, so that a trace
    /// follows the app alone).
    func keychainWithDaemon() throws -> CommandRunner {
        let shell = try CommandRunner()
        #expect(try shell.run(["passcode", "set"], input: Self.passcode + "\n").status == 0)
        #expect(try shell.run(["daemon", "start"]).status == 0)
        return shell
    }

    /// `command` on a terminal under `strace`, which writes every byte it and its children read
    /// and write (sockets included) to `trace`.
    func traced(_ command: [String], to trace: URL, _ shell: CommandRunner) throws -> PseudoTerminal {
        try PseudoTerminal(
            URL(fileURLWithPath: "/usr/bin/strace"),
            [
                "-f", "-s", "65535", "-e", "trace=read,write,readv,writev,sendto,recvfrom,sendmsg,recvmsg",
                "-o", trace.path,
            ] + command,
            environment: shell.environment)
    }

    /// keychaind draws the sheet on the app's terminal and reads the passcode there itself: a
    /// trace of every byte the app reads and writes (its socket to keychaind included) holds
    /// the sheet's reason, which the app sent, and never the passcode typed.
    @Test func thePasscodeNeverPassesThroughTheApp() throws {
        let shell = try keychainWithDaemon()
        defer { shell.cleanUp() }
        let trace = shell.home.appendingPathComponent("trace.txt")
        let terminal = try traced(
            [CommandRunner.binary.path, "authenticate", "--policy", "owner", "--reason", "To show the trace"],
            to: trace, shell)
        #expect(terminal.expect("Passcode:"))
        #expect(terminal.screen.contains("\"keychainctl\" is trying to authenticate you."))
        terminal.type(Self.passcode + "\r")
        #expect(terminal.wait() == 0)
        let output = try String(contentsOf: trace, encoding: .utf8)
        #expect(output.contains("To show the trace"), "the trace did not see the app's request")
        #expect(!output.contains(Self.passcode), "the passcode passed through the app")
    }

    /// `keychainctl unlock` and `keychainctl owner login` on a terminal ask on keychaind's
    /// sheet too: the passcode typed unlocks the keychain or opens the owner session, and it is
    /// nowhere in the trace of keychainctl (nor of the shell that runs it).
    @Test func unlockAndOwnerLoginAskOnTheKeychainsSheet() throws {
        let shell = try keychainWithDaemon()
        defer { shell.cleanUp() }
        #expect(try shell.run(["lock"]).status == 0)
        let trace = shell.home.appendingPathComponent("trace.txt")
        var terminal = try traced([CommandRunner.binary.path, "unlock"], to: trace, shell)
        #expect(terminal.expect("Passcode:"))
        #expect(terminal.sheetText.contains("\"keychainctl\" is trying to authenticate you. To unlock your keychain"))
        terminal.type("0000\r")
        #expect(terminal.expect("Wrong passcode. Try again."))
        terminal.type(Self.passcode + "\r")
        #expect(terminal.wait() == 0, "\(terminal.screen)")
        #expect(try shell.run(["status"]).stdout.contains("state: unlocked"))
        var output = try String(contentsOf: trace, encoding: .utf8)
        #expect(output.contains("To unlock your keychain"), "the trace did not see the request")
        #expect(!output.contains(Self.passcode), "the passcode passed through keychainctl")

        // The owner session belongs to the login session: a shell on the terminal leads it, and
        // lists every app's groups once keychainctl opened the session there.
        let keychainctl = CommandRunner.binary.path
        terminal = try traced(
            ["/bin/sh", "-c", "'\(keychainctl)' owner login && '\(keychainctl)' apps list"], to: trace, shell)
        #expect(terminal.expect("Passcode:"))
        #expect(terminal.sheetText.contains("To see and manage every app's items for 5 minutes"))
        terminal.type(Self.passcode + "\r")
        #expect(terminal.wait() == 0, "\(terminal.screen)")
        #expect(terminal.screen.contains("owner session open for 5 minutes"), "\(terminal.screen)")
        output = try String(contentsOf: trace, encoding: .utf8)
        #expect(output.contains("every app's items"), "the trace did not see the request")
        #expect(!output.contains(Self.passcode), "the passcode passed through keychainctl or its shell")
    }

    /// With no passcode nothing is locked: `keychainctl unlock` on a terminal succeeds at once
    /// and draws no sheet, as a piped unlock does.
    @Test func unlockWithoutAPasscodeAsksNothing() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        #expect(try shell.addPassword("s", account: "a", secret: "x"))
        let terminal = try PseudoTerminal(CommandRunner.binary, ["unlock"], environment: shell.environment)
        #expect(terminal.wait() == 0, "\(terminal.screen)")
        #expect(!terminal.screen.contains("Passcode:"))
        #expect(try shell.run(["unlock"], input: "\n").status == 0)
    }

    @Test func aMatchingTouchAuthenticates() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let terminal = try authenticate(shell, policy: "biometrics")
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(terminal.screen.contains("\"keychainctl\" is trying to authenticate you."))
        #expect(terminal.screen.contains("[Esc] Cancel"))
        #expect(terminal.screen.contains("[Enter] Enter Passcode"))
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(terminal.wait() == 0)
    }

    @Test func nonMatchingTouchesFailThenLockBiometryOut() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        var terminal = try authenticate(shell, policy: "biometrics")
        for round in 1...3 {
            #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
            if round < 3 {
                #expect(terminal.expect("Not recognized. \(3 - round) more \(round == 2 ? "try" : "tries")"))
            }
        }
        #expect(terminal.wait() == 1)
        #expect(terminal.screen.contains("LAError.authenticationFailed (-1)"))

        terminal = try authenticate(shell, policy: "biometrics")
        #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
        #expect(
            terminal.expect(
                "Not recognized. 1 more try before the fingerprint is locked until the passcode is entered."))
        #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
        #expect(terminal.wait() == 1)
        #expect(
            terminal.screen.contains(
                "Too many failed touches: the fingerprint is locked until the passcode is entered."))
        #expect(terminal.screen.contains("LAError.biometryLockout (-8)"))

        // Locked out for every later process, until the passcode.
        let locked = try shell.run(["authenticate", "--policy", "biometrics", "--reason", "again"])
        #expect(locked.stderr.contains("LAError.biometryLockout (-8)"))
        #expect(try shell.run(["biometry", "status"]).stdout.contains("locked out: yes"))
        #expect(try shell.run(["unlock"], input: "1234\n").status == 0)
        #expect(try shell.run(["biometry", "status"]).stdout.contains("locked out: no"))
    }

    @Test func theFallbackButtonEndsABiometricsEvaluationWithUserFallback() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let terminal = try authenticate(shell, policy: "biometrics")
        terminal.type("\r")
        #expect(terminal.wait() == 1)
        #expect(terminal.screen.contains("LAError.userFallback (-3)"))
    }

    @Test func cancelGivesUserCancel() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let terminal = try authenticate(shell, policy: "biometrics")
        terminal.type("\u{1b}")
        #expect(terminal.wait() == 1)
        #expect(terminal.screen.contains("LAError.userCancel (-2)"))
    }

    @Test func theOwnerPolicyFallsBackToThePasscode() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let terminal = try authenticate(shell, policy: "owner")
        #expect(terminal.expect("[Enter] Enter Passcode"))
        terminal.type("\r")
        #expect(terminal.expect("Passcode: "))
        terminal.type("9999\r")
        #expect(terminal.expect("Wrong passcode. Try again."))
        #expect(terminal.expect("Passcode: "))
        terminal.type("1234\r")
        #expect(terminal.wait() == 0)
        #expect(!terminal.screen.contains("1234") && !terminal.screen.contains("9999"))
    }

    @Test func withoutATerminalItFailsAtOnceWithNotInteractive() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let started = Date()
        let out = try shell.run(["authenticate", "--policy", "owner", "--reason", "no terminal here"])
        #expect(out.status == 1)
        #expect(out.stderr.contains("LAError.notInteractive (-1004)"))
        #expect(Date().timeIntervalSince(started) < 10)
    }
}

/// A simulated touch answers exactly a prompt that is waiting (issue 8: before, a touch with no
/// prompt exited 0 and approved any prompt opened in the next 10 seconds).
@Suite struct SimulatedTouchTests {
    @Test func aTouchWithNoWaitingPromptIsRefusedAndApprovesNothingLater() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let early = try shell.run(["biometry", "touch", "--matching"])
        #expect(early.status == 1)
        #expect(early.stderr.contains("no prompt is waiting for a touch"))
        let terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "biometrics", "--reason", "To add a new chore"],
            environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        usleep(1_500_000)
        #expect(terminal.isRunning, "the early touch approved a later prompt")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(terminal.wait() == 0)
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 1, "the prompt is gone")
    }
}
