import Foundation
import Testing

/// iOS-style keychain code (Tests/SourceCompatibility/Corpus: a wrapper in the style of the
/// popular ones and the other idioms such code uses) compiles unchanged but for its import in
/// Swift 5 and Swift 6 language modes (the package builds it as two programs), and each program
/// runs it against an embedded keychain of its own with every check passing.
@Suite struct SourceCompatibilityCorpusTests {
    @Test(arguments: ["source-compatibility-swift5", "source-compatibility-swift6"])
    func theCorpusRunsInEachLanguageMode(program: String) throws {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        let path = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(program).path
        let output = try runner.script("KEYCHAIN_MODE=embedded '\(path)'")
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.count >= 40 && lines.allSatisfy { $0.hasPrefix("ok ") }, "\(output.stdout)")
    }
}
