import Foundation
import Testing

/// A desktop app asks keychaind, which opens a desktop pinentry's window on the app's display:
/// the app needs no terminal, and the passcode is typed into the keychain's window, not the
/// app's.
@Suite struct DesktopSheetTests {
    /// Where the screenshot is kept.
    static let artefact = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keychain-desktop-sheet.png")

    /// A pinentry that records what it is told: it starts `pinentry-gtk-2` and relays its
    /// Assuan conversation, writing each line keychaind sends (never pinentry's answers, which
    /// carry the passcode) to `log`. The real pinentry dies with it (`PR_SET_PDEATHSIG`).
    static func recordingPinentry(at path: URL, log: URL) throws {
        let script = """
            #!/usr/bin/python3
            import ctypes, signal, subprocess, sys
            def die_with_parent():
                ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
            child = subprocess.Popen(["/usr/bin/pinentry-gtk-2"] + sys.argv[1:], stdin=subprocess.PIPE,
                                     stdout=sys.stdout.buffer, preexec_fn=die_with_parent)
            with open("\(log.path)", "ab") as log:
                for line in sys.stdin.buffer:
                    log.write(line); log.flush()
                    child.stdin.write(line); child.stdin.flush()
            child.stdin.close()
            sys.exit(child.wait())
            """
        try script.write(to: path, atomically: true, encoding: .utf8)
        chmod(path.path, 0o755)
    }

    @Test func aDesktopAppGetsAWindowThatNamesIt() throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        var environment = ProcessInfo.processInfo.environment
        // No configuration: the choice a user who set nothing gets.
        environment["KEYCHAIN_PINENTRY"] = ""
        environment["DISPLAY"] = display.name
        let shell = try CommandRunner(environment: environment)
        defer { shell.cleanUp() }
        #expect(try shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try shell.run(["status"]).stdout.contains("on a desktop, pinentry-gtk-2 (/usr/bin/pinentry-gtk-2)"))
        // No terminal: standard input and output are pipes.
        let app = try shell.launch(["authenticate", "--policy", "owner", "--reason", "To open the family calendar"])
        let window = try display.window(titled: "keychainctl — Keychain")
        #expect(window != nil, "no window titled for the app")
        try display.screenshot(to: Self.artefact.path)
        print("the desktop sheet: \(Self.artefact.path)")
        #expect(FileManager.default.fileExists(atPath: Self.artefact.path))
        try display.type("1234")
        let result = app.finish()
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// What the window says, as pinentry was told it over Assuan: the title and the description
    /// name the app as keychaind identified it and the reason it gave; the passcode typed is
    /// nowhere in what keychaind sent.
    @Test func theWindowSaysWhoAsksAndWhy() throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pinentry-recording-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pinentry = directory.appendingPathComponent("pinentry-recording")
        let log = directory.appendingPathComponent("assuan.log")
        try Self.recordingPinentry(at: pinentry, log: log)
        var environment = ProcessInfo.processInfo.environment
        environment["KEYCHAIN_PINENTRY"] = pinentry.path
        environment["DISPLAY"] = display.name
        let shell = try CommandRunner(environment: environment)
        defer { shell.cleanUp() }
        #expect(try shell.run(["passcode", "set"], input: "Zq7vault4471\n").status == 0)
        let app = try shell.launch(["authenticate", "--policy", "owner", "--reason", "To open the family calendar"])
        #expect(try display.window(titled: "keychainctl — Keychain") != nil, "no window titled for the app")
        try display.type("Zq7vault4471")
        let result = app.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let told = try String(contentsOf: log, encoding: .utf8)
        #expect(told.contains("SETTITLE keychainctl — Keychain\n"), "\(told)")
        #expect(
            told.contains("SETDESC \"keychainctl\" is trying to authenticate you.%0A  To open the family calendar"),
            "\(told)")
        #expect(told.contains("GETPIN\n"), "\(told)")
        #expect(!told.contains("Zq7vault4471"))
    }
}
