import Foundation
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon verifies the finger of the user who asks, through the real fprintd and
/// libfprint's virtual reader, with the machine's real polkitd holding the rule that
/// `keychainctl daemon install --system` ships (``FingerprintPolkitRule``) and nothing else added.
@Suite(.serialized) struct SystemFingerprintTests {
    @Test func theDaemonVerifiesTheFingerOfTheUserWhoAsks() throws {
        try #require(getuid() == 0, "needs root to create users (CI runs as root)")
        let fprintd = try FprintdHarness(polkitRule: FingerprintPolkitRule.text)
        defer { fprintd.stop() }
        let alice = try LocalUser.alice()
        let bob = try LocalUser.bob()
        // Each enrolls a finger of their own (root does it here, as each would in their session).
        try fprintd.enroll("right-index-finger", print: "fingerA", user: alice.name)
        try fprintd.enroll("left-index-finger", print: "fingerB", user: bob.name)
        let daemon = try SystemDaemonHarness(systemBus: try #require(fprintd.environment["DBUS_SYSTEM_BUS_ADDRESS"]))
        defer { daemon.cleanUp() }
        for user in [alice, bob] {
            #expect(try daemon.keychainctl(as: user, ["passcode", "set"], input: "1234\n").status == 0)
        }
        let status = try daemon.keychainctl(as: alice, ["biometry", "status"])
        #expect(status.stdout.contains("sensor: fingerprint reader (fprintd)"), "\(status.stderr)\n\(daemon.daemonLog)")
        #expect(try daemon.keychainctl(as: alice, ["biometry", "list"]).stdout == "right-index-finger\n")
        #expect(try daemon.keychainctl(as: bob, ["biometry", "list"]).stdout == "left-index-finger\n")
        // The rule lets the daemon verify, not enroll: each user enrolls in their own session.
        let enroll = try daemon.keychainctl(
            as: alice, ["biometry", "enroll", "--finger", "left-thumb"], input: "1234\n")
        #expect(enroll.status == 1)
        #expect(enroll.stderr.contains("enroll or remove yours with fprintd-enroll"), "\(enroll.stderr)")

        let agents = try PromptAgentProcesses(daemon, users: [alice, bob])
        defer { agents.stop() }
        // Alice's finger opens her keychain's biometric evaluation; the sheet, drawn by her
        // agent, waits for the touch.
        var app = try authenticate(daemon, as: alice)
        #expect(app.expect("Touch the fingerprint sensor."), "\(app.screen)")
        fprintd.scanEachVerification("fingerA") { app.isRunning }
        #expect(app.wait() == 0, "\(app.screen)")
        // Bob's finger, enrolled for bob, is not alice's: three misses end her evaluation.
        app = try authenticate(daemon, as: alice)
        #expect(app.expect("Touch the fingerprint sensor."), "\(app.screen)")
        fprintd.scanEachVerification("fingerB") { app.isRunning }
        #expect(app.wait() == 1)
        #expect(app.screen.contains("LAError.authenticationFailed (-1)"), "\(app.screen)")
        #expect(
            try daemon.keychainctl(as: alice, ["biometry", "status"]).stdout.contains("consecutive failed matches: 3"))
        // For bob's request, the daemon verifies bob's finger, and his counters are his own.
        app = try authenticate(daemon, as: bob)
        #expect(app.expect("Touch the fingerprint sensor."), "\(app.screen)")
        fprintd.scanEachVerification("fingerB") { app.isRunning }
        #expect(app.wait() == 0, "\(app.screen)")
        #expect(
            try daemon.keychainctl(as: bob, ["biometry", "status"]).stdout.contains("consecutive failed matches: 0"))
    }

    @Test func withoutTheRuleTheDaemonSeesNoReader() throws {
        try #require(getuid() == 0, "needs root to create users (CI runs as root)")
        let fprintd = try FprintdHarness(polkitRule: "// no rule for keychaind\n")
        defer { fprintd.stop() }
        let alice = try LocalUser.alice()
        try fprintd.enroll("right-index-finger", print: "fingerA", user: alice.name)
        let daemon = try SystemDaemonHarness(systemBus: try #require(fprintd.environment["DBUS_SYSTEM_BUS_ADDRESS"]))
        defer { daemon.cleanUp() }
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        // fprintd refuses the daemon's user alice's prints: for her, there is no reader.
        let status = try daemon.keychainctl(as: alice, ["biometry", "status"])
        #expect(status.stdout.contains("sensor: none"), "\(status.stdout)")
        let app = try authenticate(daemon, as: alice)
        #expect(app.wait() == 1)
        #expect(app.screen.contains("LAError.biometryNotAvailable"), "\(app.screen)")
    }

    /// `keychainctl authenticate --policy biometrics` as `user` on a terminal of theirs.
    func authenticate(_ daemon: SystemDaemonHarness, as user: LocalUser) throws -> PseudoTerminal {
        let line =
            user.setpriv + [
                CommandRunner.binary.path, "--system-socket", daemon.socket, "authenticate", "--policy", "biometrics",
                "--reason", "To open \(user.name)'s vault",
            ]
        return try PseudoTerminal(
            URL(fileURLWithPath: line[0]), Array(line.dropFirst()), environment: SystemDaemonHarness.environment,
            owner: (user.uid, user.gid))
    }
}

/// A registered prompt agent (`keychainctl prompt-agent`: a root-owned copy registered here, or
/// `program`, registered already) running for each user, in `environment`, each ended by its pid.
final class PromptAgentProcesses {
    private var pids: [pid_t] = []

    init(
        _ daemon: SystemDaemonHarness, users: [LocalUser],
        environment: [String: String] = SystemDaemonHarness.environment, program registered: URL? = nil
    ) throws {
        let program = try registered ?? daemon.program("keychain-prompt-agent")
        if registered == nil {
            try daemon.register(
                "prompt-agent", identifier: "keychain-prompt-agent", executable: program.path,
                groups: ["keychain-prompt-agent"], promptAgent: true)
        }
        do {
            for user in users {
                let (read, write) = try ChildSpawn.pipe()
                let line = user.setpriv + [program.path, "--system-socket", daemon.socket, "prompt-agent"]
                pids.append(
                    try ChildSpawn.spawn(
                        line[0], Array(line.dropFirst()), environment: environment, stdio: (nil, write, write)))
                close(write)
                let output = FileHandle(fileDescriptor: read, closeOnDealloc: true)
                let started = try ChildSpawn.readLine(output) ?? ""
                #expect(started.hasPrefix("drawing sheets"), "\(started)")
            }
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        for pid in pids {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        pids = []
    }
}
