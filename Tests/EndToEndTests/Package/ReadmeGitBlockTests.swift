import Foundation
import Testing

extension ReadmeTests {
    /// Issue 53: the git block, run as written in a new keychain with the helper found on
    /// `PATH` (as the package installs it), against a host that asks for a password over HTTP
    /// (``GitHTTPServer``): the first `git push` asks (git's askpass answers, as a person would
    /// type), and from then on the keychain answers: a second push with no one to ask succeeds.
    @Test func theGitBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "credential.helper keychain")
        try #require(lines.count == 2, "\(lines)")
        #expect(lines[1] == "git push")
        let server = try GitHTTPServer(user: "alice", password: "ghp-token-4711")
        defer { server.stop() }
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let bin = try Self.installed(["keychainctl", "git-credential-keychain"], in: shell)
        let askpass = shell.home.appendingPathComponent("askpass")
        try "#!/bin/sh\necho ghp-token-4711\n".write(to: askpass, atomically: true, encoding: .utf8)
        chmod(askpass.path, 0o755)
        let prefix = """
            set -e
            export PATH='\(bin.path)':"$PATH" HOME='\(shell.home.path)' GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
            export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.org
            cd '\(shell.home.path)'

            """
        // A clone to push from, its remote the host that asks.
        var result = try shell.script(
            prefix + """
                git init -q -b main work && cd work && git commit -q --allow-empty -m first
                git remote add origin '\(server.url)' && git config push.default current
                """)
        #expect(result.status == 0, "\(result.stderr)")
        // The host asks: with no helper and no one to answer, the push is refused.
        result = try shell.script(prefix + "cd work && GIT_ASKPASS=/bin/false " + lines[1])
        #expect(result.status != 0 && result.stderr.contains("unable to read askpass response"), "\(result.stderr)")
        result = try shell.script(prefix + lines[0])
        #expect(result.status == 0, "\(result.stderr)")
        result = try shell.script(prefix + "cd work && GIT_ASKPASS='\(askpass.path)' " + lines[1])
        #expect(result.status == 0, "the first push: \(result.stderr)")
        result = try shell.script(
            prefix + "cd work && git commit -q --allow-empty -m second && GIT_ASKPASS=/bin/false " + lines[1])
        #expect(result.status == 0, "the keychain did not answer: \(result.stderr)")
        result = try shell.script(prefix + "git --git-dir='\(server.repository.path)' log --format=%s main")
        #expect(result.stdout == "second\nfirst\n", "\(result.stdout)\(result.stderr)")
    }
}
