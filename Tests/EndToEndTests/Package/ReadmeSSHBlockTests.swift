import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension ReadmeTests {
    /// Issue 53: the ssh block, its lines as written, typed one by one into an interactive
    /// shell on a pseudo-terminal, in a keychain with a passcode and the simulated sensor (the
    /// sensor block's state). `ssh create` prints the only key a real sshd (root's, on a loopback
    /// port) authorizes; `server.example.com` is that sshd by the system's ssh configuration (bound
    /// over `/etc/ssh/ssh_config` in a mount namespace of the shell's own: ssh reads the user's
    /// configuration from the password database's home, which is root's on the test machine).
    /// The login's sheet names `/usr/bin/ssh` and the key, and a touch logs in; then git signs a
    /// commit through the agent with a second sheet and touch, and `git verify-commit` says the
    /// signature is good.
    @Test func theSSHBlockRunsAsWritten() throws {
        let lines = try Self.commands(ofBlockWith: "keychainctl ssh-agent &")
        try #require(lines.count == 6, "\(lines)")
        let user = try LocalUser.sshKeyLogin()
        let shell = try CommandRunner.withPasscode(simulator: true)
        defer { shell.cleanUp() }
        let bin = try Self.installed(["keychainctl"], in: shell)
        let home = shell.home.path

        let created = try shell.script("export PATH='\(bin.path)':\"$PATH\"; " + lines[0])
        #expect(created.status == 0, "\(created.stderr)")
        let key = created.stdout.trimmingCharacters(in: .newlines)
        try #require(key.hasPrefix("ecdsa-sha2-nistp256 AAAA"), "\(created.stdout)")
        let serverDirectory = shell.home.appendingPathComponent("sshd")
        try FileManager.default.createDirectory(at: serverDirectory, withIntermediateDirectories: true)
        let server = try SSHServer(
            directory: serverDirectory, authorizedKeys: key + "\n",
            settings: ["PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no"])
        let sshConfig = shell.home.appendingPathComponent("ssh_config")
        try """
            Host server.example.com
                HostName 127.0.0.1
                Port \(server.port)
                User \(user.name)
                StrictHostKeyChecking no
                UserKnownHostsFile /dev/null
                LogLevel ERROR

            """.write(to: sshConfig, atomically: true, encoding: .utf8)
        // The repository the person signs in: a change staged, and who signs it.
        try "a@example.org namespaces=\"git\" \(key)\n".write(
            toFile: home + "/allowed_signers", atomically: true, encoding: .utf8)
        let repository = try shell.script(
            "cd '\(home)' && git init -q -b main work && cd work && echo x > file && git add file")
        #expect(repository.status == 0, "\(repository.stderr)")

        var environment = shell.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HOME"] = home
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        for name in ["GIT_AUTHOR", "GIT_COMMITTER"] {
            environment[name + "_NAME"] = "A"
            environment[name + "_EMAIL"] = "a@example.org"
        }
        // The shell's one setting: a prompt the test can count.
        let startup = shell.home.appendingPathComponent("bashrc")
        try "PS1='readme$ '\n".write(to: startup, atomically: true, encoding: .utf8)
        let terminal = try PseudoTerminal(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            [
                "--mount", "--propagation", "private", "/bin/bash", "-c",
                "mount --bind '\(sshConfig.path)' /etc/ssh/ssh_config && cd '\(home)/work' "
                    + "&& exec /bin/bash --noprofile --rcfile '\(startup.path)' -i",
            ], environment: environment)
        var prompts = 1
        func run(_ line: String) -> Bool {
            terminal.type(line + "\r")
            prompts += 1
            return terminal.expect("readme$ ", times: prompts, timeout: 20)
        }
        #expect(terminal.expect("readme$ "), "\(terminal.screen)")

        // The agent, in the background of this shell: the test ends it by its pid.
        #expect(run(lines[1]), "\(terminal.screen)")
        #expect(run("echo \"agent pid $!\""), "\(terminal.screen)")
        let agent = try #require(
            terminal.screen.components(separatedBy: "agent pid ").last.flatMap { pid_t(String($0.prefix { $0.isNumber })) })
        try #require(agent > 1)
        var agentEnded = false
        defer { if !agentEnded { kill(agent, SIGKILL) } }
        #expect(terminal.expect("SSH_AUTH_SOCK="), "\(terminal.screen)")
        #expect(run(lines[2]), "\(terminal.screen)")

        // ssh: the sheet on this terminal, a touch, and the server's shell.
        terminal.type(lines[3] + "\r")
        #expect(terminal.expect("Touch the fingerprint sensor.", timeout: 20), "\(terminal.screen)")
        #expect(
            terminal.sheetText.contains("/usr/bin/ssh) wants to sign with your SSH key laptop"), "\(terminal.sheetText)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        terminal.type("echo logged in as $(id -un); exit\r")
        #expect(terminal.expect("logged in as \(user.name)", timeout: 20), "\(terminal.screen)")
        prompts += 1
        #expect(terminal.expect("readme$ ", times: prompts, timeout: 20), "\(terminal.screen)")

        // git signs with the Enclave key: a second sheet, a second touch.
        #expect(run(lines[4]), "\(terminal.screen)")
        let sheets = terminal.screen.components(separatedBy: "Touch the fingerprint sensor.").count - 1
        terminal.type(lines[5] + "\r")
        #expect(
            terminal.expect("Touch the fingerprint sensor.", times: sheets + 1, timeout: 20), "\(terminal.screen)")
        #expect(terminal.sheetText.contains("/usr/bin/ssh-keygen) wants to sign"), "\(terminal.sheetText)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        prompts += 1
        #expect(terminal.expect("readme$ ", times: prompts, timeout: 20), "\(terminal.screen)")
        #expect(
            run("git -c gpg.ssh.allowedSignersFile='\(home)/allowed_signers' verify-commit HEAD"), "\(terminal.screen)")
        #expect(terminal.screen.contains("Good \"git\" signature for a@example.org"), "\(terminal.screen)")
        // The agent holds the terminal open: it ends first, then the shell.
        kill(agent, SIGKILL)
        agentEnded = true
        terminal.type("exit\r")
        _ = terminal.wait()
    }
}
