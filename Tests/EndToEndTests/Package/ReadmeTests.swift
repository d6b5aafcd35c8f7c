import Foundation
import Testing

/// The README shows what works: its Swift blocks are the programs in `Snippets/` (which the
/// package builds), and its shell blocks run as written, in order, in a new keychain.
@Suite struct ReadmeTests {
    static let root = CommandRunner.binary.deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func blocks(_ language: String) throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.components(separatedBy: "```\(language)\n").dropFirst().map {
            $0.components(separatedBy: "```").first ?? ""
        }
    }

    /// The commands of the first `text` block holding `marker`, one a line, comments left out.
    static func commands(ofBlockWith marker: String) throws -> [String] {
        let block = try #require(try blocks("text").first { $0.contains(marker) })
        return block.split(separator: "\n").map {
            String($0.components(separatedBy: "  #").first ?? "").trimmingCharacters(in: .whitespaces)
        }
    }

    /// A directory in `shell`'s home where the built `programs` are found by name, as installed.
    static func installed(_ programs: [String], in shell: CommandRunner) throws -> URL {
        let bin = shell.home.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for program in programs {
            try FileManager.default.createSymbolicLink(
                at: bin.appendingPathComponent(program),
                withDestinationURL: CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(program))
        }
        return bin
    }

    @Test func everySwiftBlockIsABuiltProgram() throws {
        let snippets = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("Snippets").path
        ).filter { $0.hasSuffix(".swift") }
        let programs = try snippets.map {
            try String(contentsOf: Self.root.appendingPathComponent("Snippets/\($0)"), encoding: .utf8)
        }
        let blocks = try Self.blocks("swift")
        #expect(blocks.count == 3)
        for block in blocks {
            #expect(
                programs.contains(block),
                "a README Swift block is not one of Snippets/, so nothing builds it:\n\(block)")
        }
        // Built with the package: run them, as a reader would, in a new keychain.
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        for (name, expected) in [
            ("ReadmeSecItem", "hunter2"), ("ReadmeFacade", "hunter2"),
            ("ReadmeLocalAuthentication", "biometry is not available"),
        ] {
            let result = try shell.script("\"$(dirname \"$KEYCHAINCTL\")/\(name)\"")
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(result.stdout.contains(expected), "\(name): \(result.stdout)")
        }
    }

    /// Each in a keychain of its own (issue 53: the sync block ran only because the backup block
    /// before it had opened an owner session), as a newcomer pastes one.
    @Test func everyShellBlockRunsAsWrittenInANewKeychain() throws {
        let examples = try Self.blocks("sh").filter { !$0.hasPrefix("swift ") }
        #expect(examples.count >= 3)
        for example in examples {
            let shell = try CommandRunner()
            defer { shell.cleanUp() }
            let bin = try Self.installed(["keychainctl"], in: shell)
            // In the keychain's own directory, so that the files a block writes go with it.
            let result = try shell.script(
                "set -e -o pipefail; cd '\(shell.home.path)'; export PATH='\(bin.path)':\"$PATH\"\n" + example)
            #expect(result.status == 0, "\(example)\n\(result.stderr)")
        }
    }

    /// Issue 53: the simulated sensor's block failed as written (`biometry touch` needs an owner
    /// session the block never opened). Its lines, in a keychain with a passcode: the first
    /// three with the passcode typed, `authenticate` on a terminal, and the touch from another
    /// process while its sheet shows.
    @Test func theSimulatedSensorBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "biometry simulate on")
        try #require(lines.count == 5, "\(lines)")
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let bin = try Self.installed(["keychainctl"], in: shell)
        let path = "export PATH='\(bin.path)':\"$PATH\"; "
        for line in lines.prefix(3) {
            let run = try shell.script(path + "printf '1234\\n' | " + line)
            #expect(run.status == 0, "\(line): \(run.stderr)")
        }
        var environment = shell.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let sheet = try PseudoTerminal(URL(fileURLWithPath: "/bin/sh"), ["-c", lines[3]], environment: environment)
        #expect(sheet.expect("Touch the fingerprint sensor."), "\(sheet.screen)")
        let touch = try shell.script(path + lines[4])
        #expect(touch.status == 0, "\(touch.stderr)")
        #expect(sheet.wait() == 0, "\(sheet.screen)")
    }
}
