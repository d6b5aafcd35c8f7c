import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon, which runs as its own user, has a user's prompt agent draw the sheets of
/// that user's apps on their terminals (Docs/SecurityModel.md, "Who draws the prompt").
@Suite(.serialized) struct PromptAgentTests {
    /// `keychainctl authenticate` as alice on a terminal of hers, through the system daemon.
    func authenticate(_ daemon: SystemDaemonHarness, as user: LocalUser, reason: String) throws -> PseudoTerminal {
        let line =
            user.setpriv + [
                CommandRunner.binary.path, "--system-socket", daemon.socket, "authenticate", "--policy", "owner",
                "--reason", reason,
            ]
        return try PseudoTerminal(
            URL(fileURLWithPath: line[0]), Array(line.dropFirst()), environment: SystemDaemonHarness.environment,
            owner: (user.uid, user.gid))
    }

    @Test func theUsersAgentDrawsTheSheetAndTheDaemonChecksThePasscode() throws {
        try #require(getuid() == 0, "needs root to create users (CI runs as root)")
        let daemon = try SystemDaemonHarness(capabilities: ["sys_ptrace"])
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        // No agent: the daemon cannot draw on her terminal, and says so at once.
        var app = try authenticate(daemon, as: alice, reason: "To read alice's item")
        #expect(app.wait() == 1)
        #expect(app.screen.contains("LAError.notInteractive"), "\(app.screen)")
        // Only a program root registered as the agent may be one.
        let agentProgram = try daemon.program("keychain-prompt-agent")
        try daemon.register(
            "prompt-agent", identifier: "keychain-prompt-agent", executable: agentProgram.path,
            groups: ["keychain-prompt-agent"], promptAgent: true)
        let impostor = try daemon.keychainctl(as: alice, ["prompt-agent"])
        #expect(impostor.status == 1)
        #expect(impostor.stderr.contains("OSStatus -34018"), "\(impostor.stderr)")
        let (read, write) = try ChildSpawn.pipe()
        let line = alice.setpriv + [agentProgram.path, "--system-socket", daemon.socket, "prompt-agent"]
        let agent = try ChildSpawn.spawn(
            line[0], Array(line.dropFirst()), environment: SystemDaemonHarness.environment, stdio: (nil, write, write))
        close(write)
        let output = FileHandle(fileDescriptor: read, closeOnDealloc: true)
        var agentEnded = false
        defer {
            if !agentEnded {
                kill(agent, SIGKILL)
                var status: Int32 = 0
                waitpid(agent, &status, 0)
            }
        }
        let started = try ChildSpawn.readLine(output) ?? ""
        #expect(started.hasPrefix("drawing sheets"), "\(started)")
        // One agent per user.
        let second = try daemon.keychainctl(as: alice, ["prompt-agent"], program: agentProgram)
        #expect(second.stderr.contains("OSStatus -25299"), "\(second.stderr)")
        // The agent draws the daemon's sheet on her terminal; the daemon checks what is typed.
        app = try authenticate(daemon, as: alice, reason: "To read alice's item")
        #expect(app.expect("Passcode:"))
        #expect(app.sheetText.contains("\"keychainctl\" is trying to authenticate you. To read alice's item"))
        app.type("0000\r")
        #expect(app.expect("Wrong passcode. Try again."))
        app.type("1234\r")
        #expect(app.wait() == 0)
        #expect(daemon.daemonLog.contains("prompt agent serving"))
        // Cancel on the agent's sheet is the app's userCancel.
        app = try authenticate(daemon, as: alice, reason: "To read it again")
        #expect(app.expect("Passcode:"))
        app.type("\u{1b}")
        #expect(app.wait() == 1)
        #expect(app.screen.contains("LAError.userCancel"), "\(app.screen)")
        // `keychainctl unlock` on her terminal asks on the agent's sheet too.
        #expect(try daemon.keychainctl(as: alice, ["lock"]).status == 0)
        let unlock =
            alice.setpriv + [CommandRunner.binary.path, "--system-socket", daemon.socket, "unlock"]
        app = try PseudoTerminal(
            URL(fileURLWithPath: unlock[0]), Array(unlock.dropFirst()), environment: SystemDaemonHarness.environment,
            owner: (alice.uid, alice.gid))
        #expect(app.expect("Passcode:"))
        #expect(app.sheetText.contains("To unlock your keychain"), "\(app.screen)")
        app.type("1234\r")
        #expect(app.wait() == 0, "\(app.screen)")
        #expect(try daemon.keychainctl(as: alice, ["status"]).stdout.contains("state: unlocked"))
        // Once the agent is gone, no sheet again, at once.
        kill(agent, SIGTERM)
        var status: Int32 = 0
        waitpid(agent, &status, 0)
        agentEnded = true
        app = try authenticate(daemon, as: alice, reason: "To read it once more")
        #expect(app.wait() == 1)
        #expect(app.screen.contains("LAError.notInteractive"), "\(app.screen)")
    }

    /// An app with no terminal, on a desktop: the agent opens a desktop pinentry's window on the
    /// app's display, which the daemon read from the app's environment and the agent checked.
    @Test func theAgentOpensAWindowOnTheDesktopOfAnAppWithoutATerminal() throws {
        try #require(getuid() == 0, "needs root to create users (CI runs as root)")
        let display = try VirtualDisplay()
        defer { display.stop() }
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        // The agent with no configuration: it picks the desktop pinentry a user would get.
        var agentEnvironment = SystemDaemonHarness.environment
        agentEnvironment["KEYCHAIN_PINENTRY"] = ""
        let agents = try PromptAgentProcesses(daemon, users: [alice], environment: agentEnvironment)
        defer { agents.stop() }
        var appEnvironment = SystemDaemonHarness.environment
        appEnvironment["DISPLAY"] = display.name
        let line =
            alice.setpriv + [
                CommandRunner.binary.path, "--system-socket", daemon.socket, "authenticate", "--policy", "owner",
                "--reason", "To open alice's calendar",
            ]
        // Standard input is /dev/null and its output a pipe, in a session of its own: no terminal.
        let (read, write) = try ChildSpawn.pipe()
        let app = try ChildSpawn.spawn("/usr/bin/setsid", line, environment: appEnvironment, stdio: (nil, write, write))
        close(write)
        let output = FileHandle(fileDescriptor: read, closeOnDealloc: true)
        var status: Int32 = 0
        var ended = false
        defer {
            if !ended {
                kill(app, SIGKILL)
                waitpid(app, &status, 0)
            }
        }
        let window = try display.window(titled: "keychainctl — Keychain")
        #expect(window != nil, "no window titled for the app: \(daemon.daemonLog)")
        try display.type("1234")
        let deadline = Date().addingTimeInterval(20)
        while !ended && Date() < deadline {
            ended = waitpid(app, &status, WNOHANG) == app
            if !ended { usleep(50_000) }
        }
        let said = ended ? String(decoding: output.readDataToEndOfFile(), as: UTF8.self) : ""
        #expect(ended && status == 0, "the app did not authenticate (wait status \(status)): \(said)")
    }
}
