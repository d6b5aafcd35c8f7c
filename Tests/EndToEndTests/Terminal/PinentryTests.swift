import Foundation
import Testing

/// keychaind draws its sheets with the pinentry a Linux user already has (gpg-agent's), on the
/// app's terminal: `keychainctl authenticate` at a terminal, as a person would answer it.
@Suite struct PinentryTests {
    static let pinentry = "/usr/bin/pinentry-curses"

    func authenticate(_ shell: CommandRunner) throws -> TmuxSession {
        try TmuxSession(
            CommandRunner.binary, ["authenticate", "--policy", "owner", "--reason", "To add a new chore"],
            environment: shell.environment, width: 100, height: 30)
    }

    @Test func aTouchFailsThenTheFallbackTakesThePasscode() throws {
        let shell = try CommandRunner.withPasscode(pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        #expect(try shell.run(["status"]).stdout.contains("sheets: pinentry-curses (\(Self.pinentry))"))
        let app = try authenticate(shell)
        defer { app.close() }
        // pinentry's confirmation: the app's name as keychaind identified it, the reason, the
        // touch, the fallback and Cancel.
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        #expect(app.screen.contains("\"keychainctl\" is trying to authenticate you."))
        #expect(app.screen.contains("To add a new chore"))
        #expect(app.screen.contains("<Enter Passcode>") && app.screen.contains("<Cancel>"), "\(app.screen)")
        #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
        #expect(app.waitFor("Not recognized. 2 more tries."), "\(app.screen)")
        // The fallback button (focused first): pinentry's passcode entry.
        app.send("Enter")
        #expect(app.waitFor("Passcode:"), "\(app.screen)")
        app.send("0000", "Enter")
        #expect(app.waitFor("Wrong passcode. Try again."), "\(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("EXIT=0"), "\(app.screen)")
    }

    @Test func cancelOnThePinentryIsTheAppsUserCancel() throws {
        let shell = try CommandRunner.withPasscode(pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        let app = try authenticate(shell)
        defer { app.close() }
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        app.send("Tab")
        app.send("Enter")
        #expect(app.waitFor("EXIT=1"), "\(app.screen)")
        #expect(app.screen.contains("LAError.userCancel"), "\(app.screen)")
    }

    /// Issue 53: Escape did not cancel the terminal's sheet (pinentry-curses takes Tab, Tab,
    /// Enter). With nothing configured, a terminal gets the keychain's own sheet: Esc cancels.
    @Test func escapeCancelsTheDefaultTerminalSheet() throws {
        let shell = try CommandRunner.withPasscode(pinentry: "")
        defer { shell.cleanUp() }
        #expect(try shell.run(["status"]).stdout.contains("sheets: the keychain's own terminal sheet"))
        let app = try authenticate(shell)
        defer { app.close() }
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        app.send("Escape")
        #expect(app.waitFor("EXIT=1", timeout: 8), "\(app.screen)")
        #expect(app.screen.contains("LAError.userCancel"), "\(app.screen)")
    }

    /// A `userPresence` item read at a terminal: pinentry's sheet, the fallback, the passcode.
    @Test func aGuardedItemReadByKeychainctlAsksThroughPinentry() throws {
        let shell = try CommandRunner.withPasscode(pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        let added = try shell.run(
            ["add-generic-password", "-s", "SampleService", "-a", "sample", "--access-control", "userPresence"],
            input: "SECRET_PASSWORD_TEXT")
        #expect(added.status == 0, "\(added.stderr)")
        let app = try TmuxSession(
            CommandRunner.binary, ["find-generic-password", "-s", "SampleService", "-w"],
            environment: shell.environment, width: 100, height: 30)
        defer { app.close() }
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        #expect(app.screen.contains("\"keychainctl\" is trying to authenticate you."))
        app.send("Enter")
        #expect(app.waitFor("Passcode:"), "\(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("EXIT=0"), "\(app.screen)")
        #expect(app.screen.contains("SECRET_PASSWORD_TEXT"))
    }

    /// The guide's app: "Add a Chore" asks through pinentry, over the app's own screen, and the
    /// app draws itself again once the touch answers.
    @Test func choresAsksThroughPinentryAndCarriesOn() throws {
        let shell = try CommandRunner.withPasscode(pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        let chores = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("chores")
        let app = try TmuxSession(chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("a")
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        #expect(app.screen.contains("\"chores\" is trying to authenticate you."))
        #expect(app.screen.contains("<Enter Passcode>"), "\(app.screen)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(app.waitFor("Title:"), "\(app.screen)")
    }

    /// Issue 53: during a passcode delay pinentry showed nothing for the delay's length (35 s of
    /// blank terminal, then "You can enter the passcode now"). The sheet counts down, and its
    /// one button cancels.
    @Test func aPasscodeDelayCountsDownOnThePinentry() throws {
        let shell = try CommandRunner.withPasscode(simulator: false, pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        #expect(try shell.run(["lock"]).status == 0)
        // Five different wrong passcodes (the same one twice counts once).
        for wrong in 0..<5 { _ = try shell.run(["unlock"], input: "000\(wrong)\n") }
        #expect(try shell.run(["status"]).stdout.contains("failed passcode attempts: 5"))
        let app = try authenticate(shell)
        defer { app.close() }
        #expect(app.waitFor("5 wrong passcodes. Try again in"), "\(app.screen)")
        app.send("Enter")
        #expect(app.waitFor("EXIT=1"), "\(app.screen)")
        #expect(app.screen.contains("LAError.userCancel"), "\(app.screen)")
    }

    @Test func aMatchingTouchClosesThePinentry() throws {
        let shell = try CommandRunner.withPasscode(pinentry: Self.pinentry)
        defer { shell.cleanUp() }
        let app = try authenticate(shell)
        defer { app.close() }
        #expect(app.waitFor("Touch the fingerprint sensor."), "\(app.screen)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(app.waitFor("EXIT=0"), "\(app.screen)")
    }
}
