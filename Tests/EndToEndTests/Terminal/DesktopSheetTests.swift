import Foundation
import Testing

/// A desktop app asks keychaind, which opens a desktop pinentry's window on the app's display:
/// the app needs no terminal, and the passcode is typed into the keychain's window, not the
/// app's.
@Suite struct DesktopSheetTests {
    /// Where the screenshot is kept.
    static let artefact = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keychain-desktop-sheet.png")

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
}
