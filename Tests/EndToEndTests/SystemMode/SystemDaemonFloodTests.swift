import Foundation
import KeychainProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One user cannot stall another: alice opens 700 connections to the system daemon and holds
/// eight of them in 60-second waits for a touch, while bob adds and reads. Before connections
/// were capped per user and served on threads of their own, bob's lookup timed out after 20 s
/// (the daemon was out of descriptors) and his add waited 58 s (the 8-thread pool was full).
@Suite(.serialized) struct SystemDaemonFloodTests {
    /// What bob's commands may take, each, while alice floods: far under the stalls it replaced,
    /// and room for a loaded two-core CI machine (they take tens of milliseconds alone).
    static let bound: Double = 3

    /// The daemon runs with systemd's default limit of 1,024 open files.
    @Test func aFloodOfOneUserLeavesAnotherUsersReadsAndAddsWithinTheBound() throws {
        try #require(getuid() == 0, "needs root to create users (CI runs as root)")
        let daemon = try SystemDaemonHarness(capabilities: ["sys_ptrace"], descriptorLimit: 1024)
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        let bob = try LocalUser.bob()
        for (arguments, input) in [(["passcode", "set"], "1234\n"), (["biometry", "simulate", "on"], "1234\n")] {
            #expect(try daemon.keychainctl(as: alice, arguments, input: input).status == 0)
        }
        // Sheets the system daemon cannot draw (it opens no user's terminal, and no prompt agent
        // runs): each is answered at once, never left waiting.
        let wait = RequestCoder.encode(
            .authenticateOwner(
                OwnerAuthentication(
                    factors: .biometryOrPasscode, reason: "flood", cancelTitle: "Cancel", fallbackTitle: nil,
                    context: .random())))
        // Each connection is held unless the daemon's greeting refuses it (a daemon that sends
        // none is given a fifth of a second).
        let flood = """
            import select, socket, sys, time
            held, refused = [], 0
            for _ in range(700):
                s = socket.socket(socket.AF_UNIX); s.settimeout(10)
                try:
                    s.connect(sys.argv[1])
                    body = b""
                    if select.select([s], [], [], 0.2)[0]:
                        header = s.recv(4)
                        body = s.recv(int.from_bytes(header, "big"))
                except OSError:
                    refused += 1
                    continue
                if len(body) > 2 and body[1] != 0: refused += 1
                else: held.append(s)
            wait = bytes.fromhex(sys.argv[2])
            for s in held[:8]: s.sendall(len(wait).to_bytes(4, "big") + wait)
            print("held", len(held), "refused", refused, flush=True)
            sys.stdin.readline()
            answered = 0
            for s in held[:8]:
                header = s.recv(4)
                body = s.recv(int.from_bytes(header, "big"))
                if body[1:4] == bytes([0, 12, 9]): answered += 1
            print("not interactive", answered, flush=True)
            time.sleep(120)
            """
        let script = daemon.base.appendingPathComponent("flood.py")
        try flood.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o644)
        let (read, write) = try ChildSpawn.pipe()
        let (input, prompt) = try ChildSpawn.pipe()
        let line = alice.setpriv + ["/usr/bin/python3", script.path, daemon.socket, Hex.encode(wait)]
        let flooder = try ChildSpawn.spawn(
            line[0], Array(line.dropFirst()), environment: SystemDaemonHarness.environment, stdio: (input, write, write)
        )
        close(write)
        close(input)
        let asking = FileHandle(fileDescriptor: prompt, closeOnDealloc: true)
        let output = FileHandle(fileDescriptor: read, closeOnDealloc: true)
        defer {
            kill(flooder, SIGKILL)
            var status: Int32 = 0
            waitpid(flooder, &status, 0)
        }
        // A daemon that sends no greeting makes her wait a fifth of a second a connection.
        let report = try ChildSpawn.readLine(output, seconds: 300) ?? ""
        // She gets the per-user cap (64) and is told why for the rest.
        #expect(report.hasPrefix("held 64 refused 636"), "\(report)")
        #expect(daemon.daemonLog.contains("already has 64 connections open"))
        var times: [Double] = []
        for round in 0..<5 {
            for arguments in [
                ["add-generic-password", "-s", "bob-\(round)", "-a", "a"],
                ["find-generic-password", "-s", "bob-\(round)", "-w"],
            ] {
                let start = Date()
                let result = try daemon.keychainctl(as: bob, arguments, input: "bob's secret")
                times.append(Date().timeIntervalSince(start))
                #expect(result.status == 0, "\(arguments[0]) as bob while alice floods: \(result.stderr)")
            }
        }
        let sorted = times.sorted()
        print("bob's commands while alice floods (s): median \(sorted[sorted.count / 2]), max \(sorted.last ?? 0)")
        #expect(sorted.last ?? .infinity < Self.bound, "bob waited \(sorted.last ?? 0) s")
        // Alice's eight authentications were answered: no sheet can be drawn for her here.
        asking.write(Data("check\n".utf8))
        let waiting = try ChildSpawn.readLine(output) ?? ""
        #expect(waiting.hasPrefix("not interactive 8"), "\(waiting)")
        // Bob's status counts his own client alone, not alice's 64.
        let status = try daemon.keychainctl(as: bob, ["daemon", "status"]).stdout
        #expect(status.contains("clients: 1\n"), "\(status)")
    }
}
