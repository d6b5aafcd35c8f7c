import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl ssh` and `keychainctl ssh-agent` with the real OpenSSH tools and git: keys made
/// in keychaind's Enclave, listed, used to sign through the agent and verified by OpenSSH, and a
/// key with an access control that signs only once the owner answers its prompt.
@Suite(.serialized) struct SSHAgentTests {
    /// The agent, started for a test and ended by its pid.
    final class Agent {
        let socket: String
        private let running: CommandRunner.Running

        init(_ shell: CommandRunner, proxy: String? = nil, reuseWindow: Int? = nil) throws {
            socket = shell.home.appendingPathComponent("agent.socket").path
            running = try shell.launch(
                ["ssh-agent", "--socket", socket] + (proxy.map { ["--proxy", $0] } ?? [])
                    + (reuseWindow.map { ["--reuse-window", "\($0)"] } ?? []))
            let line = String(decoding: running.stdout.fileHandleForReading.availableDataUntilNewline(), as: UTF8.self)
            #expect(line == "SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;\n")
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        }

        deinit {
            kill(running.process.processIdentifier, SIGKILL)
            running.process.waitUntilExit()
        }
    }

    private func script(_ shell: CommandRunner, _ agent: Agent, _ text: String) throws -> CommandRunner.Output {
        try shell.script("export SSH_AUTH_SOCK='\(agent.socket)'; cd '\(shell.home.path)'; \(text)")
    }

    @Test func keysAreMadeListedPrintedAndDeleted() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let created = try shell.run(["ssh", "create", "laptop"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("ecdsa-sha2-nistp256 AAAA") && created.stdout.hasSuffix(" laptop\n"))
        #expect(try shell.run(["ssh", "public-key", "laptop"]).stdout == created.stdout)
        #expect(try shell.run(["ssh", "create", "laptop"]).status == 1, "a second key of that name")
        #expect(try shell.run(["ssh", "create", "two words"]).status == 1)
        // OpenSSH reads the line and gives the same fingerprint the list shows.
        try created.stdout.write(to: shell.home.appendingPathComponent("laptop.pub"), atomically: true, encoding: .utf8)
        let fingerprint = try shell.script("ssh-keygen -l -f '\(shell.home.path)/laptop.pub'")
        let listed = try shell.run(["ssh", "list"])
        let listedFingerprint = try #require(
            listed.stdout.split(separator: "\t").last?.trimmingCharacters(in: .newlines))
        #expect(
            fingerprint.stdout.hasPrefix("256 \(listedFingerprint) laptop (ECDSA)"),
            "\(fingerprint.stdout) vs \(listed.stdout)")
        #expect(try shell.run(["ssh", "delete", "laptop"]).status == 0)
        #expect(try shell.run(["ssh", "public-key", "laptop"]).status == 44)
        #expect(try shell.run(["ssh", "list"]).stdout.isEmpty)
    }

    /// ssh-add lists the key; ssh-keygen signs a file through the agent and verifies it; git
    /// signs a commit (gpg.format=ssh) and verifies it.
    @Test func openSSHAndGitSignThroughTheAgent() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let line = try shell.run(["ssh", "create", "signer"]).stdout
        try line.write(to: shell.home.appendingPathComponent("signer.pub"), atomically: true, encoding: .utf8)
        try "me@example.com \(line)".write(
            to: shell.home.appendingPathComponent("allowed"), atomically: true, encoding: .utf8)
        let agent = try Agent(shell)
        #expect(try script(shell, agent, "ssh-add -L").stdout == line)
        let signed = try script(
            shell, agent,
            """
            echo 'release 1.0' > message
            ssh-keygen -Y sign -f signer.pub -n file message && ssh-keygen -Y verify -f allowed -I me@example.com -n \
            file -s message.sig < message
            """)
        #expect(signed.status == 0, "\(signed.stdout)\(signed.stderr)")
        #expect(signed.stdout.contains("Good \"file\" signature for me@example.com"))
        let tampered = try script(
            shell, agent,
            "echo 'release 1.1' > message && ssh-keygen -Y verify -f allowed -I me@example.com -n file -s "
                + "message.sig < message"
        )
        #expect(tampered.status != 0)
        let git = try script(
            shell, agent,
            """
            git init -q repo && cd repo && git config user.email me@example.com && git config user.name Me \
              && git config gpg.format ssh && git config user.signingkey ../signer.pub && git config \
              gpg.ssh.allowedSignersFile ../allowed \
              && echo x > f && git add f && git commit -q -S -m signed && git verify-commit HEAD
            """)
        #expect(git.status == 0, "\(git.stdout)\(git.stderr)")
        #expect(git.stderr.contains("Good \"git\" signature for me@example.com"))
        // keychaind's audit log has a line for each signature (two files, one commit).
        let log =
            (try? String(contentsOf: shell.runtime.appendingPathComponent("keychain/keychaind.log"), encoding: .utf8))
            ?? ""
        #expect(log.components(separatedBy: "enclave key signed").count - 1 >= 2, "\(log)")
    }

    /// A key with userPresence: with no terminal to ask on, the agent refuses (and goes on
    /// serving); on a terminal it asks, and signs once the passcode is typed.
    @Test func aGuardedKeySignsOnlyAfterThePrompt() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let line = try shell.run(["ssh", "create", "guarded", "--access-control", "userPresence"]).stdout
        try line.write(to: shell.home.appendingPathComponent("guarded.pub"), atomically: true, encoding: .utf8)
        try "me \(line)".write(to: shell.home.appendingPathComponent("allowed"), atomically: true, encoding: .utf8)
        do {
            let agent = try Agent(shell)
            let refused = try script(
                shell, agent, "echo hi > message; ssh-keygen -Y sign -f guarded.pub -n file message")
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("agent refused operation"), "\(refused.stderr)")
            #expect(try script(shell, agent, "ssh-add -L").stdout == line, "the agent still serves")
        }

        // On a terminal: the sheet names the program and the key; the passcode signs.
        let socket = shell.home.appendingPathComponent("tty-agent.socket").path
        let terminal = try terminalAgent(shell, socket: socket)
        var environment = shell.environment
        environment["SSH_AUTH_SOCK"] = socket
        let signer = try SpawnedProgram(
            "/bin/bash",
            [
                "-c",
                "cd '\(shell.home.path)' && echo hi > message2 && ssh-keygen -Y sign -f guarded.pub -n file message2 "
                    + "&& ssh-keygen -Y verify -f allowed -I me -n file -s message2.sig < message2",
            ], environment: environment, capturingOutput: true, capturingErrors: true)
        defer { signer.end() }
        #expect(terminal.expect("Passcode:"))
        #expect(terminal.sheetText.contains("wants to sign with your SSH key guarded"), "\(terminal.sheetText)")
        terminal.type("1234\r")
        let text = String(decoding: signer.readOutputToEnd(), as: UTF8.self)
        #expect(signer.terminationStatus == 0, "\(text)\n\(terminal.screen)")
        #expect(text.contains("Good \"file\" signature for me"))
        terminal.send(signal: SIGTERM)
        _ = terminal.wait()
    }
}

extension SSHAgentTests {
    /// An agent with no terminal of its own asks on the terminal of the program that wants the
    /// signature: ssh-keygen on a pseudo-terminal sees the sheet, and the passcode typed there
    /// signs.
    @Test func theSheetShowsOnTheTerminalOfTheProgramThatAsked() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let line = try shell.run(["ssh", "create", "guarded", "--access-control", "userPresence"]).stdout
        try line.write(to: shell.home.appendingPathComponent("guarded.pub"), atomically: true, encoding: .utf8)
        try "me \(line)".write(to: shell.home.appendingPathComponent("allowed"), atomically: true, encoding: .utf8)
        let agent = try Agent(shell)
        var environment = shell.environment
        environment["SSH_AUTH_SOCK"] = agent.socket
        let client = try PseudoTerminal(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c",
                "cd '\(shell.home.path)' && echo hi > message && ssh-keygen -Y sign -f guarded.pub -n file message "
                    + "&& ssh-keygen -Y verify -f allowed -I me -n file -s message.sig < message",
            ], environment: environment)
        #expect(client.expect("Passcode:"))
        // It names the program, its pid and path, the key, and what the signature is for.
        #expect(client.sheetText.contains("“ssh-keygen” (pid "), "\(client.sheetText)")
        #expect(
            client.sheetText.contains(
                "/usr/bin/ssh-keygen) wants to sign with your SSH key guarded to make a “file” signature"),
            "\(client.sheetText)")
        client.type("1234\r")
        #expect(client.expect("Good \"file\" signature for me"), "\(client.screen)")
        #expect(client.wait() == 0)
    }
}

extension SSHAgentTests {
    /// `--proxy`: OpenSSH's own agent holding a software key behind this one. Both keys are
    /// listed, and the software key's signature is the other agent's.
    @Test func anotherAgentsKeysAreOfferedAndSignedByIt() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let enclaveLine = try shell.run(["ssh", "create", "enclave"]).stdout
        let upstream = shell.home.appendingPathComponent("openssh-agent.socket").path
        let opensshAgent = try ChildSpawn.spawn(
            "/usr/bin/ssh-agent", ["-D", "-a", upstream], environment: [:], stdio: (nil, nil, nil))
        defer {
            kill(opensshAgent, SIGKILL)
            var status: Int32 = 0
            waitpid(opensshAgent, &status, 0)
        }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: upstream) && Date() < deadline { usleep(20_000) }
        let added = try shell.script(
            "cd '\(shell.home.path)' && ssh-keygen -q -t ecdsa -N '' -C software -f software && "
                + "SSH_AUTH_SOCK='\(upstream)' ssh-add -q software"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let agent = try Agent(shell, proxy: upstream)
        let listed = try script(shell, agent, "ssh-add -L").stdout.split(separator: "\n")
        #expect(listed.count == 2)
        #expect(
            listed.first.map(String.init) == enclaveLine.trimmingCharacters(in: .newlines), "the Enclave's keys first")
        #expect(listed.last?.hasSuffix(" software") == true)
        let signed = try script(
            shell, agent,
            """
            echo hi > message && ssh-keygen -Y sign -f software.pub -n file message \
              && echo "me $(cat software.pub)" > allowed && ssh-keygen -Y verify -f allowed -I me -n file -s \
              message.sig < message
            """)
        #expect(signed.status == 0, "\(signed.stderr)")
    }

    /// `--reuse-window`: within it one passcode serves the key's next signature; without it,
    /// each signature asks again.
    @Test(arguments: [(60, 1), (0, 2)])
    func aReuseWindowAsksOnceForSeveralSignatures(window: Int, sheets: Int) throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let line = try shell.run(["ssh", "create", "guarded", "--access-control", "userPresence"]).stdout
        try line.write(to: shell.home.appendingPathComponent("guarded.pub"), atomically: true, encoding: .utf8)
        let agent = try Agent(shell, reuseWindow: window)
        var environment = shell.environment
        environment["SSH_AUTH_SOCK"] = agent.socket
        let client = try PseudoTerminal(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c",
                "cd '\(shell.home.path)' && echo a > one && echo b > two && ssh-keygen -Y sign -f guarded.pub -n "
                    + "file one && ssh-keygen -Y sign -f guarded.pub -n file two && echo BOTH-SIGNED",
            ], environment: environment)
        for _ in 0..<sheets {
            #expect(
                client.expect("Passcode:", times: client.screen.components(separatedBy: "Passcode:").count),
                "\(client.screen)")
            client.type("1234\r")
        }
        #expect(client.expect("BOTH-SIGNED"), "\(client.screen)")
        #expect(client.screen.components(separatedBy: "wants to sign").count - 1 == sheets, "\(client.screen)")
        #expect(client.wait() == 0)
    }

    /// Issue 57: when the program that asked died while its sheet showed, the sheet stayed on
    /// its dead terminal, and the next program's sheet waited behind it. The agent now ends the
    /// signature's authentication once its client has gone, and the next sheet shows at once.
    @Test func theSheetOfAClientThatDiedIsTakenDown() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let line = try shell.run(["ssh", "create", "guarded", "--access-control", "userPresence"]).stdout
        try line.write(to: shell.home.appendingPathComponent("guarded.pub"), atomically: true, encoding: .utf8)
        let agent = try Agent(shell)
        var environment = shell.environment
        environment["SSH_AUTH_SOCK"] = agent.socket
        func signer(_ file: String) throws -> PseudoTerminal {
            try PseudoTerminal(
                URL(fileURLWithPath: "/bin/bash"),
                [
                    "-c",
                    "cd '\(shell.home.path)' && echo \(file) > \(file) && ssh-keygen -Y sign -f guarded.pub -n file "
                        + "\(file) && echo SIGNED-\(file)",
                ], environment: environment)
        }
        let dying = try signer("one")
        #expect(dying.expect("Passcode:"), "\(dying.screen)")
        // The whole job goes, as a closed terminal's would.
        dying.sendToProcessGroup(signal: SIGKILL)
        _ = dying.wait()
        let next = try signer("two")
        #expect(next.expect("Passcode:", timeout: 15), "the next sheet waited: \(next.screen)")
        next.type("1234\r")
        #expect(next.expect("SIGNED-two"), "\(next.screen)")
        #expect(next.wait() == 0)
    }

    /// The agent is undumpable, which a per-user keychaind (no `CAP_SYS_PTRACE`) can identify
    /// only while it connects: after keychaind restarts, the agent connects again and lists its
    /// keys. As a user of the machine: root's daemon could read an undumpable process anyway.
    @Test func theAgentListsItsKeysAgainAfterKeychaindRestarts() throws {
        try #require(getuid() == 0, "needs root to run the agent as another user (CI runs as root)")
        let alice = try LocalUser.alice()
        let home = URL(fileURLWithPath: "/tmp/kc-alice-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chown(home.path, alice.uid, alice.gid)
        chmod(home.path, 0o700)
        let socket = home.appendingPathComponent("agent.socket").path
        let environment = [
            "PATH=\(CommandRunner.binary.deletingLastPathComponent().path):/usr/bin:/bin", "HOME=\(home.path)",
            "XDG_DATA_HOME=\(home.path)/data",
            "XDG_RUNTIME_DIR=\(home.path)/run", "KEYCHAIN_MODE=daemon", "SSH_AUTH_SOCK=\(socket)",
        ]
        let asAlice = alice.setpriv + ["/usr/bin/env", "-i"] + environment
        let shell = try CommandRunner()
        func run(_ line: [String]) throws -> CommandRunner.Output {
            try shell.script((asAlice + line).map(SystemDaemonHarness.quoted).joined(separator: " "))
        }
        let agentLine = asAlice + [CommandRunner.binary.path, "ssh-agent", "--socket", socket]
        var agent: pid_t = 0
        defer {
            if agent > 0 {
                kill(agent, SIGKILL)
                var status: Int32 = 0
                waitpid(agent, &status, 0)
            }
            _ = try? run([CommandRunner.binary.path, "daemon", "stop"])
            try? FileManager.default.removeItem(at: home)
            try? FileManager.default.removeItem(at: shell.home)
        }
        let line = try run([CommandRunner.binary.path, "ssh", "create", "kept"]).stdout
        #expect(line.hasPrefix("ecdsa-sha2-nistp256 "))
        agent = try ChildSpawn.spawn(
            agentLine[0], Array(agentLine.dropFirst()), environment: [:], stdio: (nil, nil, nil))
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        #expect(try run(["/usr/bin/ssh-add", "-L"]).stdout == line)
        #expect(try run([CommandRunner.binary.path, "daemon", "stop"]).status == 0)
        let again = try run(["/usr/bin/ssh-add", "-L"])
        #expect(
            again.stdout == line, "the agent lists nothing after keychaind restarted: \(again.stdout) \(again.stderr)")
    }

    /// The agent answers only the process that connected: a child that inherited the socket
    /// gets `SSH_AGENT_FAILURE` (5) where its parent got the key list (12).
    @Test func aMessageFromAnotherProcessThanTheClientIsRefused() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        _ = try shell.run(["ssh", "create", "open"])
        let agent = try Agent(shell)
        let client = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            def ask():
                s.sendall(bytes([0, 0, 0, 1, 11]))
                header = s.recv(4)
                return s.recv(int.from_bytes(header, "big"))[0] if len(header) == 4 else "closed"
            print("parent", ask(), flush=True)
            child = os.fork()
            if child == 0:
                print("child", ask(), flush=True)
                os._exit(0)
            os.waitpid(child, 0)
            """
        let result = try shell.script("/usr/bin/python3 -c '\(client)' '\(agent.socket)'")
        #expect(result.stdout == "parent 12\nchild 5\n", "\(result.stdout) \(result.stderr)")
    }

    @Test func installAgentWritesAUserUnit() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let config = shell.home.appendingPathComponent("config")
        let result = try shell.script("XDG_CONFIG_HOME='\(config.path)' \"$KEYCHAINCTL\" ssh install-agent")
        #expect(result.status == 0, "\(result.stderr)")
        let unit = try String(
            contentsOf: config.appendingPathComponent("systemd/user/keychain-ssh-agent.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=\(CommandRunner.binary.resolvingSymlinksInPath().path) ssh-agent"), "\(unit)")
        #expect(unit.contains("WantedBy=default.target"))
    }
}

/// `keychainctl ssh-agent` on a pseudo-terminal, where it shows its sheets, once its socket is
/// there.
private func terminalAgent(_ shell: CommandRunner, socket: String) throws -> PseudoTerminal {
    let terminal = try PseudoTerminal(
        CommandRunner.binary, ["ssh-agent", "--socket", socket], environment: shell.environment)
    #expect(terminal.expect("SSH_AUTH_SOCK="))
    let deadline = Date().addingTimeInterval(10)
    while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
    return terminal
}

extension FileHandle {
    /// Reads one byte at a time up to and including the first newline (or the end).
    fileprivate func availableDataUntilNewline() -> Data {
        var line = Data()
        while let byte = try? read(upToCount: 1), let first = byte.first {
            line.append(first)
            if first == UInt8(ascii: "\n") { break }
        }
        return line
    }
}

/// The real OpenSSH client logs in to a real sshd through the agent: sshd runs on a loopback
/// port as an unprivileged user whose only authorized key is the Enclave key.
@Suite(.serialized) struct SSHLoginTests {
    private func ssh(_ user: LocalUser, _ server: SSHServer, agent socket: String) -> [String] {
        [
            "ssh", "-F", "/dev/null", "-o", "IdentityAgent=\(socket)", "-o", "BatchMode=yes", "-o",
            "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-p", "\(server.port)", "\(user.name)@127.0.0.1", "echo logged in as $(id -un)",
        ]
    }

    /// The open key logs in as soon as it is asked; the biometryAny key once the owner touches
    /// the (simulated) sensor, the sheet showing on the terminal ssh runs on.
    @Test func sshLogsInWithAnOpenKeyAndWithAGuardedOneAfterATouch() throws {
        let user = try LocalUser.sshLogin()
        let shell = try CommandRunner.withPasscode(simulator: true)
        defer { shell.cleanUp() }
        let open = try shell.run(["ssh", "create", "open"]).stdout
        let guarded = try shell.run(["ssh", "create", "guarded", "--access-control", "biometryAny"]).stdout
        func serverDirectory(_ name: String) throws -> URL {
            let directory = shell.home.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }
        let socket = shell.home.appendingPathComponent("agent.socket").path
        let agent = try shell.launch(["ssh-agent", "--socket", socket])
        defer {
            kill(agent.process.processIdentifier, SIGKILL)
            agent.process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }

        // The open key: no sheet, no touch.
        do {
            let server = try SSHServer(
                directory: serverDirectory("sshd-open"), authorizedKeys: open,
                settings: ["PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no"], runAs: user)
            let login = try shell.script(ssh(user, server, agent: socket).map { "'\($0)'" }.joined(separator: " "))
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stdout == "logged in as \(user.name)\n")
        }

        // Only the guarded key is authorized: ssh, on a terminal, waits for the touch.
        let server = try SSHServer(
            directory: serverDirectory("sshd-guarded"), authorizedKeys: guarded,
            settings: ["PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no"], runAs: user)
        let client = try PseudoTerminal(
            URL(fileURLWithPath: "/usr/bin/ssh"), Array(ssh(user, server, agent: socket).dropFirst()),
            environment: shell.environment)
        // The sheet names the client by its pid and path, and says what the signature is for.
        #expect(client.expect("Touch the fingerprint sensor."))
        #expect(
            client.sheetText.contains("“ssh” (pid ")
                && client.sheetText.contains("/usr/bin/ssh) wants to sign with your SSH key guarded"),
            "\(client.sheetText)")
        // The host, from OpenSSH's session-bind: its host key's fingerprint.
        let hostKey = try shell.script(
            "ssh-keygen -l -f '\(shell.home.path)/sshd-guarded/host_key.pub' | cut -d' ' -f2"
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            hostKey.hasPrefix("SHA256:")
                && client.sheetText.contains("to log in to the host with key \(hostKey) as \(user.name)"),
            "\(client.sheetText)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(client.expect("logged in as \(user.name)"), "\(client.screen)")
        #expect(client.wait() == 0)
    }

    /// Issue 57: with `ssh -A` to host A, the local ssh binds its agent connection as forwarded,
    /// and the agent refused that bind but kept the connection unbound; the hop's own bind, for
    /// its session from A to B, then made it look local, and the reuse window granted to a local
    /// login to B signed the hop's login with no sheet at all (or, without the window, a sheet
    /// that read as a local login to B). Through two real sshd's: by default the guarded key
    /// refuses the forwarded request, window or not; with the owner's `ask`, the sheet names
    /// host A and host B, and a touch signs, never the window.
    @Test(arguments: [false, true])
    func aForwardedAgentNeverPassesForTheLocalSSH(ownerAsks: Bool) throws {
        let user = try LocalUser.sshLogin()
        let shell = try CommandRunner.withPasscode(simulator: true)
        defer { shell.cleanUp() }
        let open = try shell.run(["ssh", "create", "open"]).stdout
        let guarded = try shell.run(["ssh", "create", "guarded", "--access-control", "biometryAny"]).stdout
        if ownerAsks {
            let set = try shell.run(["ssh", "forwarding", "guarded", "ask"])
            #expect(set.status == 0 && set.stdout == "guarded: ask when forwarded\n", "\(set.stdout)\(set.stderr)")
        }
        let agent = try SSHAgentTests.Agent(shell, reuseWindow: 120)
        var servers: [String: SSHServer] = [:]
        var hostKeys: [String: String] = [:]
        // Host A takes the open key (no sheet to reach it); host B only the guarded one.
        for (name, authorized) in [("a", open), ("b", guarded)] {
            let directory = shell.home.appendingPathComponent("sshd-\(name)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            servers[name] = try SSHServer(
                directory: directory, authorizedKeys: authorized,
                settings: [
                    "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
                    "AllowAgentForwarding yes",
                ], runAs: user)
            hostKeys[name] = try shell.script(
                "ssh-keygen -l -f '\(directory.path)/host_key.pub' | cut -d' ' -f2"
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (a, b) = (try #require(servers["a"]), try #require(servers["b"]))
        var environment = shell.environment
        environment["SSH_AUTH_SOCK"] = agent.socket
        let options = [
            "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
            "UserKnownHostsFile=/dev/null",
        ]

        // A local login to B: a touch, which the window keeps for ssh and host B.
        let local = try PseudoTerminal(
            URL(fileURLWithPath: "/usr/bin/ssh"),
            options + ["-p", "\(b.port)", "\(user.name)@127.0.0.1", "echo logged in to B"], environment: environment)
        #expect(local.expect("Touch the fingerprint sensor."), "\(local.screen)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(local.expect("logged in to B"), "\(local.screen)")
        #expect(local.wait() == 0)

        // On A, ssh to B through the forwarded agent.
        let hop = (options + ["-p", "\(b.port)", "\(user.name)@127.0.0.1", "echo hop reached B"]).map { "'\($0)'" }
        let forwarded = try PseudoTerminal(
            URL(fileURLWithPath: "/usr/bin/ssh"),
            options + ["-A", "-p", "\(a.port)", "\(user.name)@127.0.0.1", "ssh " + hop.joined(separator: " ")],
            environment: environment)
        guard ownerAsks else {
            #expect(forwarded.wait() != 0, "\(forwarded.screen)")
            #expect(!forwarded.screen.contains("hop reached B"), "\(forwarded.screen)")
            #expect(!forwarded.screen.contains("wants to sign"), "no sheet, and no window: \(forwarded.screen)")
            return
        }
        #expect(forwarded.expect("Touch the fingerprint sensor."), "\(forwarded.screen)")
        let sheet = forwarded.sheetText
        #expect(sheet.contains("through the agent forwarded to the host with key \(hostKeys["a"] ?? "?")"), "\(sheet)")
        #expect(sheet.contains("to log in to the host with key \(hostKeys["b"] ?? "?") as \(user.name)"), "\(sheet)")
        #expect(try shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(forwarded.expect("hop reached B"), "\(forwarded.screen)")
        #expect(forwarded.wait() == 0)
    }
}
