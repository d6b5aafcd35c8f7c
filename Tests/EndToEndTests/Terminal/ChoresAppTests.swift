import Foundation
import Testing

/// The guide's walkthrough app, driven in tmux as a person would.
@Suite struct ChoresAppTests {
    static let chores: URL = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("chores")

    func savedTitles(_ shell: CommandRunner) -> [String] {
        let url = shell.home.appendingPathComponent("chores/chores.json")
        guard let data = try? Data(contentsOf: url),
            let chores = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return [] }
        return chores.compactMap { $0["title"] as? String }
    }

    /// Starts chores and presses "Add a Chore" once the biometric sheet is up.
    func openAddSheet(_ shell: CommandRunner) throws -> TmuxSession {
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("a")
        #expect(app.waitFor("Touch the fingerprint sensor."))
        return app
    }

    @Test func firstRunWithoutAPasscodeExplainsAndOffersToSetOne() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("No device passcode is set yet"))
        #expect(app.screen.contains("Set a device passcode now?"))
        app.send("y")
        #expect(app.waitFor("New passcode:"))
        app.send("2468", "Enter")
        #expect(app.waitFor("Confirm new passcode:"))
        app.send("2468", "Enter")
        #expect(app.waitFor("Passcode set."))
        #expect(app.screen.contains("Groceries"))
        #expect(!app.screen.contains("2468"))
        #expect(try shell.run(["status"]).stdout.contains("passcode: set"))
    }

    @Test func addingAChoreWithAMatchingTouch() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try openAddSheet(shell)
        defer { app.close() }
        #expect(app.screen.contains("To add a new chore"))
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(app.waitFor("Title:"))
        app.send("Laundry", "Enter")
        #expect(app.waitFor("Notes:"))
        app.send("Whites first", "Enter")
        #expect(app.waitFor("Added “Laundry”."))
        #expect(app.screen.contains("Authenticated with your fingerprint."))
        #expect(savedTitles(shell) == ["Groceries", "Devices", "Laundry"])
    }

    @Test func cancelLeavesTheListUnchanged() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try openAddSheet(shell)
        defer { app.close() }
        app.send("Escape")
        #expect(app.waitFor("Cancelled: nothing was changed."))
        #expect(savedTitles(shell).isEmpty)
    }

    @Test func nonMatchingTouchesThenThePasscodeFallback() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try openAddSheet(shell)
        defer { app.close() }
        for _ in 0..<3 {
            #expect(try shell.run(["biometry", "touch", "--non-matching"]).status == 0)
            usleep(300_000)
        }
        // The app's own fallback: the device passcode through deviceOwnerAuthentication on the
        // same context, straight to the passcode field (no second fingerprint sheet).
        #expect(app.waitFor("Not recognized. 1 more try"))
        #expect(app.waitFor("Passcode:"))
        #expect(
            app.screen.components(separatedBy: "[Enter] Enter Passcode").count - 1 == 1,
            "the fingerprint sheet's fallback button, and no second fingerprint sheet: \(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("Title:"))
        app.send("Dishes", "Enter")
        #expect(app.waitFor("Notes:"))
        app.send("Enter")
        #expect(
            app.waitFor(
                "The fingerprint was not recognized. Authenticated with the device passcode. Added “Dishes”."))
        #expect(savedTitles(shell).last == "Dishes")
    }

    @Test func choosingTheFallbackGoesStraightToThePasscodeOnce() throws {
        let shell = try CommandRunner.withPasscode()
        defer { shell.cleanUp() }
        let app = try openAddSheet(shell)
        defer { app.close() }
        app.send("Enter")
        #expect(app.waitFor("Passcode:"))
        #expect(
            app.screen.components(separatedBy: "is trying to authenticate you").count - 1 == 2,
            "the fingerprint sheet, then one passcode sheet")
        #expect(
            app.screen.components(separatedBy: "[Enter] Enter Passcode").count - 1 == 1,
            "the fingerprint sheet's fallback button, and no second fingerprint sheet: \(app.screen)")
        print("----- chores: fallback chosen\n\(app.screen)")
        app.send("1234", "Enter")
        #expect(app.waitFor("Title:"))
        app.send("Escape")
        #expect(app.waitFor("You chose the passcode. Authenticated with the device passcode."))
    }

    @Test func withoutAReaderDeletingAsksForThePasscode() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let app = try TmuxSession(Self.chores, environment: shell.environment)
        defer { app.close() }
        #expect(app.waitFor("[a] Add a Chore"))
        app.send("d")
        #expect(app.waitFor("To delete a chore"))
        #expect(app.waitFor("Passcode:"))
        app.send("1234", "Enter")
        #expect(app.waitFor("Deleted “Groceries”."))
        #expect(savedTitles(shell) == ["Devices"])
        app.send("q")
        #expect(app.waitFor("EXIT=0"))
    }

    @Test func withoutATerminalTheListIsPrintedForAnyone() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let process = try SpawnedProgram(Self.chores.path, [], environment: shell.environment, capturingOutput: true)
        let text = String(decoding: process.readOutputToEnd(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("[ ] Groceries"))
        #expect(text.contains("Run chores in a terminal"))
    }

    /// Issue 53: `chores --help` printed the list. It prints help; an unknown option is a usage
    /// error.
    @Test func helpIsHelp() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let help = try SpawnedProgram(
            Self.chores.path, ["--help"], environment: shell.environment, capturingOutput: true)
        let text = String(decoding: help.readOutputToEnd(), as: UTF8.self)
        #expect(help.terminationStatus == 0 && text.contains("USAGE: chores") && !text.contains("Groceries"), "\(text)")
        let unknown = try SpawnedProgram(Self.chores.path, ["--list"], environment: shell.environment)
        #expect(unknown.terminationStatus == 64)
    }
}
