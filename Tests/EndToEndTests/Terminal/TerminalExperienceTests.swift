import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The terminal is left as it was found, whatever ends a program; the sheet is drawn where the
/// user is and shows only what it should; chores reads what people type (issue: "A terminal
/// experience people trust").
@Suite struct TerminalExperienceTests {
    static let chores = ChoresAppTests.chores

    @Test(arguments: ["C-c", "sheet"])
    func ctrlCInChoresLeavesTheTerminalAsItWas(_ moment: String) throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try TmuxSession(
            Self.chores, environment: shell.environment,
            afterExit: "stty -a | tr ' ;' '\\n\\n' | grep -x -e '-*icanon' -e '-*echo'; echo MODES-READ")
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        #expect(app.display("#{alternate_on}") == "1")
        if moment == "sheet" {
            app.send("a")
            #expect(app.waitFor("Touch the fingerprint sensor."))
        }
        app.send("C-c")
        #expect(app.waitFor("EXIT=130"))
        #expect(app.display("#{alternate_on}") == "0", "still in the alternate screen")
        // Both modes are printed before the marker: read the screen once it is there.
        #expect(app.waitFor("MODES-READ"))
        let lines = app.screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("icanon") && lines.contains("echo"), "\(lines.suffix(4))")
    }

    @Test func ctrlZLeavesTheTerminalUsableAndContinuingRedraws() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        #expect(app.display("#{alternate_on}") == "1")
        app.send("C-z")
        let deadline = Date().addingTimeInterval(5)
        while app.display("#{alternate_on}") != "0" && Date() < deadline { usleep(50_000) }
        #expect(app.display("#{alternate_on}") == "0", "stopped in the alternate screen")
        // The pane's shell leads the process group chores is in: continue them both.
        let group = try #require(Int32(app.display("#{pane_pid}")))
        kill(-group, SIGCONT)
        while app.display("#{alternate_on}") != "1" && Date() < deadline.addingTimeInterval(5) { usleep(50_000) }
        #expect(app.display("#{alternate_on}") == "1")
        #expect(app.waitFor("[a] Add a Chore"), "redrawn after SIGCONT")
        app.send("q")
        #expect(app.waitFor("EXIT=0"))
    }

    @Test(arguments: [SIGTERM, SIGHUP])
    func aSignalDuringTheSheetRestoresTheTerminal(_ signal: Int32) throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "biometrics", "--reason", "To add a new chore"],
            environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(terminal.modes.c_lflag & tcflag_t(ICANON | ECHO) == 0, "the sheet reads key by key")
        terminal.send(signal: signal)
        #expect(terminal.wait() == 128 + signal)
        #expect(terminal.lineModeReturns())
    }

    @Test func aProgramThatReturnsFromMainWithTheSheetOpenLeavesTheTerminalAsItWas() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let program = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(
            "ReplyClosureWithoutWaiting")
        let terminal = try PseudoTerminal(program, [], environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(terminal.modes.c_lflag & tcflag_t(ICANON | ECHO) == 0, "the sheet reads key by key")
        #expect(terminal.wait() == 0)
        #expect(terminal.lineModeReturns())
    }

    @Test func aResizedWindowIsRedrawn() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        // Reset the pane's screen without telling chores: only a redraw brings the list back.
        app.send("-R")
        #expect(!app.screen.contains("[a] Add a Chore"))
        app.resize(width: 120, height: 30)
        #expect(app.waitFor("[a] Add a Chore"), "not redrawn after the window changed size")
        app.send("q")
        #expect(app.waitFor("EXIT=0"))
    }

    @Test func ctrlCAtAHiddenPromptLeavesEchoOn() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        try shell.run(["lock"])
        let unlock = try PseudoTerminal(CommandRunner.binary, ["unlock"], environment: shell.environment)
        #expect(unlock.expect("Passcode: "))
        #expect(unlock.modes.c_lflag & tcflag_t(ECHO) == 0, "the prompt hides what is typed")
        unlock.type("12\u{03}")
        #expect(unlock.wait() == 128 + SIGINT)
        #expect(unlock.modes.c_lflag & tcflag_t(ECHO) != 0)
    }

    @Test func textFromCallersCannotDriveTheTerminal() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let reason = "To add\u{1b}[2J a chore\u{1b}]0;owned\u{07} " + String(repeating: "very long ", count: 60)
        let terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "biometrics", "--reason", reason],
            environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(!terminal.screen.contains("\u{1b}[2J"))
        #expect(!terminal.screen.contains("\u{1b}]0;"))
        #expect(terminal.screen.contains("To add a chore"))
        #expect(terminal.screen.contains("…"), "a long reason is cut")
        terminal.type("\u{1b}")
        #expect(terminal.wait() != 0)
    }

    @Test func theSheetIsOnTheTerminalAndTheSecretGoesToTheOutput() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        try KeychainTouchIDTests.addSampleItem(shell, account: "me")
        let output = shell.home.appendingPathComponent("out.txt")
        let bash = URL(fileURLWithPath: ChildSpawn.find("bash") ?? "/bin/bash")
        var environment = shell.environment
        environment["KEYCHAINCTL"] = CommandRunner.binary.path
        let terminal = try PseudoTerminal(
            bash, ["-c", "\"$KEYCHAINCTL\" find-generic-password -s SampleService -w | cat > '\(output.path)'"],
            environment: environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(terminal.wait() == 0)
        #expect(try String(contentsOf: output, encoding: .utf8) == "SECRET_PASSWORD_TEXT\n")
        #expect(!terminal.screen.contains("SECRET_PASSWORD_TEXT"))
    }

    @Test func withoutATerminalTheHintNamesTheTerminalNotTheLock() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        try KeychainTouchIDTests.addSampleItem(shell, account: "me", secret: "S")
        let result = try shell.script("setsid -w \"$KEYCHAINCTL\" find-generic-password -s SampleService -w")
        #expect(result.status == 1)
        #expect(result.stderr.contains("errSecInteractionNotAllowed"))
        #expect(result.stderr.contains("controlling terminal"))
        #expect(!result.stderr.contains("lock state"))
    }

    @Test func choresTakesUTF8AndEditingKeysAndArrowsDoNotQuit() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("Left")
        app.send("Right")
        app.send("PageUp")
        app.send("Down")
        #expect(app.waitFor("> [ ] Devices"), "Down moved the selection")
        #expect(!app.screen.contains("EXIT="), "an escape sequence quit the app")
        app.send("a")
        #expect(app.waitFor("Touch the fingerprint sensor."))
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(app.waitFor("Title:"))
        app.send("-l", "afé")
        app.send("Home")
        app.send("-l", "C")
        app.send("End")
        app.send("-l", " ok!")
        app.send("Left", "BSpace")
        app.send("Enter")
        #expect(app.waitFor("Notes:"))
        app.send("Enter")
        #expect(app.waitFor("Added “Café o!”."))
        #expect(ChoresAppTests().savedTitles(shell).last == "Café o!")
    }

    @Test func firstRunSaysWhyAPasscodeWasRefusedAndDecliningShowsTheList() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("Set a device passcode now?"))
        app.send("y")
        #expect(app.waitFor("New passcode:"))
        app.send("2468", "Enter")
        #expect(app.waitFor("Confirm new passcode:"))
        app.send("1357", "Enter")
        #expect(app.waitFor("The two passcodes differ"))
        app.send("y")
        #expect(app.waitFor("New passcode:"))
        app.send("12", "Enter")
        #expect(app.waitFor("Confirm new passcode:"))
        app.send("12", "Enter")
        #expect(app.waitFor("at least 4 characters"))
        app.send("n")
        #expect(app.waitFor("read-only"))
        #expect(app.screen.contains("Groceries"))
        app.send("a")
        #expect(app.waitFor("Changing chores needs a device passcode"))
        app.send("q")
        #expect(app.waitFor("EXIT=0"))
    }
}

/// What the sheet says while the Enclave refuses: failed touches up to the lockout, and the
/// passcode delay counting down. Prints the screens, for the record.
@Suite struct SheetStateTests {
    @Test func failedTouchesSayHowManyRemainAndTheLockout() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try TmuxSession(ChoresAppTests.chores, environment: shell.environment, width: 100, height: 30)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("a")
        #expect(app.waitFor("Touch the fingerprint sensor."))
        for _ in 0..<3 {
            #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
            usleep(300_000)
        }
        #expect(app.waitFor("Passcode:"))
        app.send("Escape")
        #expect(app.waitFor("Cancelled: nothing was changed."))
        app.send("a")
        #expect(app.waitFor("Touch the fingerprint sensor."))
        #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
        #expect(app.waitFor("1 more try before the fingerprint is locked"))
        #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
        #expect(app.waitFor("the fingerprint is locked until the passcode is entered."))
        #expect(app.waitFor("Passcode:"))
        print("----- chores: lockout\n\(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("Title:"))
    }

    @Test func aPasscodeDelayCountsDownAndRefusesInput() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let app = try TmuxSession(ChoresAppTests.chores, environment: shell.environment, width: 100, height: 30)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("d")
        #expect(app.waitFor("Passcode:"))
        for wrong in ["1111", "2222", "3333", "4444", "5555"] {
            app.send(wrong, "Enter")
            usleep(400_000)
        }
        #expect(app.waitFor("5 wrong passcodes. Try again in 0:"))
        let first = app.screen
        app.send("1234", "Enter")
        sleep(2)
        let later = app.screen
        print("----- chores: delay countdown\n\(later)")
        #expect(later != first, "the countdown moves")
        #expect(!later.contains("Title:") && !later.contains("Deleted"), "input is refused during the delay")
        #expect(
            try shell.run(["status"]).stdout.contains("failed passcode attempts: 5"), "the typed passcode was not tried"
        )
        app.send("Escape")
        #expect(app.waitFor("Cancelled: nothing was changed."))
    }
}
