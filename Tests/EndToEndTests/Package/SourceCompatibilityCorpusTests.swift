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
