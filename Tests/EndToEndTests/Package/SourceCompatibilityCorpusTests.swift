import Foundation
import Testing

/// iOS-style keychain code (Tests/SourceCompatibility/Corpus: a wrapper in the style of the
/// popular ones and the other idioms such code uses) compiles unchanged but for its import in
/// Swift 5 and Swift 6 language modes (the package builds it as two programs, which link
/// `Security` and `LocalAuthentication` alone), and each program runs it through a keychaind
/// of its own with every check passing.
@Suite struct SourceCompatibilityCorpusTests {
    @Test(arguments: ["source-compatibility-swift5", "source-compatibility-swift6"])
    func theCorpusRunsInEachLanguageMode(program: String) throws {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        let path = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(program).path
        let output = try runner.script("'\(path)'")
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count >= 40 && lines.allSatisfy { $0.hasPrefix("ok ") }, "\(output.stdout)")
    }

    /// iOS code that shares an item through an application group runs once the owner declares
    /// the app with that group in `com.apple.security.application-groups`.
    @Test func theAppGroupIdiomRunsOnceTheAppIsDeclared() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let corpus = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(
            "source-compatibility-swift6")
        let entitlements = daemon.shell.home.appendingPathComponent("Corpus.entitlements")
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
            <key>application-identifier</key>
            <string>ABCDE12345.com.example.corpus</string>
            <key>com.apple.security.application-groups</key>
            <array><string>group.com.example.corpus</string></array>
        </dict>
        </plist>
        """.write(to: entitlements, atomically: true, encoding: .utf8)
        let undeclared = try daemon.run(corpus, ["--app-group", "group.com.example.corpus"])
        #expect(undeclared.status == 1, "\(undeclared.stdout)")
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        let declared = try daemon.shell.run(["apps", "declare", corpus.path, "--entitlements", entitlements.path])
        #expect(declared.status == 0, "\(declared.stderr)")
        let output = try daemon.run(corpus, ["--app-group", "group.com.example.corpus"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout == "ok an item shared through an application group\n", "\(output.stdout)")
    }

    /// An app that links only the app side cannot be switched to the embedded keychain by its
    /// environment: it has none, and says so.
    @Test func anAppWithoutTheEmbeddedKeychainRefusesToBeSwitchedToIt() throws {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        let path = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(
            "source-compatibility-swift6"
        ).path
        let output = try runner.script("KEYCHAIN_MODE=embedded '\(path)'")
        #expect(output.status == 1)
        #expect(output.stdout.contains("FAIL set a string"), "\(output.stdout)")
        #expect(!FileManager.default.fileExists(atPath: runner.keychainDirectory.path), "a keychain was made")
        #expect(try runner.daemonPID() == nil, "a daemon was started")
    }
}
