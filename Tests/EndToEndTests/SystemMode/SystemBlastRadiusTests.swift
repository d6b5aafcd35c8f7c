import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension SystemModeTests {
    /// The longest one of bob's commands (a whole `keychainctl` run, debug build, two shared
    /// cores) may take while alice's worker fails: the bound the blast-radius tests state.
    static let otherUsersBound = 3.0

    /// Issue 52, blast radius: in the single system daemon of af67e1b, one user's trap (a
    /// restored date, say) stopped every user's keychain. Now alice's worker is killed (SIGKILL),
    /// crashes (SIGSEGV), traps (SIGILL, as a Swift trap ends) and aborts (SIGABRT) again and
    /// again, and hangs (SIGSTOP), while bob reads and writes: each of bob's commands works
    /// within the bound, and nothing of anyone's is lost.
    @Test func oneUsersWorkerFailingInALoopReachesNoOneElse() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let (alice, bob) = (try LocalUser.alice(), try LocalUser.bob())
        for index in 0..<3 {
            #expect(
                try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "a\(index)"], input: "s\(index)")
                    .status == 0)
        }
        #expect(try daemon.keychainctl(as: bob, ["add-generic-password", "-s", "bank", "-a", "b"], input: "bob's").status == 0)

        // The failing loop: alice's next request starts her worker again, which is then ended
        // by the next signal.
        let stop = Atomic<Bool>(false)
        let ended = Atomic<Int>(0)
        let (front, uid) = (daemon.pid, alice.uid)
        let request = alice.setpriv + [CommandRunner.binary.path, "--system-socket", daemon.socket, "status"]
        let failing = Thread {
            let signals = [SIGKILL, SIGSEGV, SIGILL, SIGABRT]
            var round = 0
            while !stop.load(ordering: .relaxed) {
                let asking = Process()
                asking.executableURL = URL(fileURLWithPath: request[0])
                asking.arguments = Array(request.dropFirst())
                asking.standardOutput = FileHandle.nullDevice
                asking.standardError = FileHandle.nullDevice
                if (try? asking.run()) != nil { asking.waitUntilExit() }
                if let worker = SystemDaemonHarness.worker(of: uid, front: front) {
                    kill(worker, signals[round % signals.count])
                    ended.add(1, ordering: .relaxed)
                }
                round += 1
                usleep(100_000)
            }
        }
        failing.start()
        var latencies: [Double] = []
        // Until alice's worker has ended at least eight times (it starts again at most once a
        // second), and at least 20 rounds.
        var rounds = 0
        let deadline = Date().addingTimeInterval(60)
        while rounds < 20 || (ended.load(ordering: .relaxed) < 8 && Date() < deadline) {
            let round = rounds
            rounds += 1
            let started = Date()
            let read = try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "bank", "-a", "b", "-w"])
            latencies.append(Date().timeIntervalSince(started))
            #expect(read.stdout == "bob's\n", "round \(round): \(read.stderr)")
            let writing = Date()
            let wrote = try daemon.keychainctl(
                as: bob, ["add-generic-password", "-s", "bank", "-a", "round \(round)"], input: "r\(round)")
            latencies.append(Date().timeIntervalSince(writing))
            #expect(wrote.status == 0, "round \(round): \(wrote.stderr)")
        }
        stop.store(true, ordering: .relaxed)
        while !failing.isFinished { usleep(10_000) }
        #expect(ended.load(ordering: .relaxed) >= 8, "alice's worker was ended \(ended.load(ordering: .relaxed)) times")
        latencies.sort()
        let median = latencies[latencies.count / 2]
        print(
            "blast radius: alice's worker ended \(ended.load(ordering: .relaxed)) times; bob's \(latencies.count) commands: "
                + "p50 \(Int(median * 1000)) ms, max \(Int(latencies.last! * 1000)) ms")
        #expect(latencies.last! < Self.otherUsersBound, "\(latencies)")

        // Hung: alice's worker stopped, bob goes on.
        _ = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-a", "a0", "-w"])
        let hung = try #require(daemon.worker(of: alice))
        kill(hung, SIGSTOP)
        let started = Date()
        #expect(try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "bank", "-a", "b", "-w"]).stdout == "bob's\n")
        #expect(Date().timeIntervalSince(started) < Self.otherUsersBound)
        kill(hung, SIGCONT)

        // Nothing of anyone's was lost.
        for index in 0..<3 {
            let read = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-a", "a\(index)", "-w"])
            #expect(read.stdout == "s\(index)\n", "\(read.stderr)")
        }
        for round in 0..<rounds {
            let read = try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "bank", "-a", "round \(round)", "-w"])
            #expect(read.stdout == "r\(round)\n", "\(read.stderr)")
        }
        #expect(daemon.daemonLog.contains("was ended by signal"), "\(daemon.daemonLog)")
    }

    /// A worker past its memory limit fails for its user alone. With 96 MiB, one of alice's
    /// derivations cannot run: her passcode's when this machine calibrated it above the limit,
    /// else a restore's (128 MiB, before the file can be authenticated); bob, whose worker has
    /// the same limit, reads and writes as before, and alice's items are still hers.
    @Test func aWorkerPastItsMemoryLimitFailsAlone() throws {
        let daemon = try SystemDaemonHarness(extraArguments: ["--tpm", "none", "--memory-limit", "96"])
        defer { daemon.cleanUp() }
        let (alice, bob) = (try LocalUser.alice(), try LocalUser.bob())
        #expect(try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "a"], input: "kept").status == 0)
        #expect(try daemon.keychainctl(as: bob, ["add-generic-password", "-s", "bank", "-a", "b"], input: "bob's").status == 0)
        var refused = try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n")
        if refused.status == 0 {
            #expect(try daemon.keychainctl(as: alice, ["owner", "login"], input: "1234\n").status == 0)
            let file = try Self.backupHeader(logN: 17, in: daemon)
            refused = try daemon.keychainctl(as: alice, ["restore", file.path], input: "pw\n")
        }
        // Refused, and not as a wrong password: the derivation never ran to its end.
        #expect(refused.status != 0 && !refused.stderr.contains("-25293"), "\(refused.stdout)\(refused.stderr)")
        #expect(try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "bank", "-w"]).stdout == "bob's\n")
        #expect(try daemon.keychainctl(as: bob, ["add-generic-password", "-s", "bank", "-a", "c"], input: "more").status == 0)
        #expect(try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout == "kept\n")
        print("memory limit: \(refused.stderr.split(separator: "\n").first ?? "")")
    }

    /// A backup file of a header alone (63 bytes, anyone may read it in the daemon's directory):
    /// scrypt N = 2^`logN`, r = 8, p = 1, and an HMAC that is garbage.
    static func backupHeader(logN: UInt8, in daemon: SystemDaemonHarness) throws -> URL {
        let file = daemon.base.appendingPathComponent("header-\(logN).backup")
        var header: [UInt8] = [0x89, 0x4B, 0x43, 0x42, 0x4B, 0x55, 0x50, 0x0A, 1, logN, 0, 0, 0, 8, 1]
        header += [UInt8](repeating: 7, count: 16) + [UInt8](repeating: 0xEE, count: 32)
        try Data(header).write(to: file)
        chmod(file.path, 0o644)
        return file
    }

    /// Issue 52, attack 3, in the daemon: four restores at once of a 63-byte header asking for
    /// scrypt N = 2^20 (1 GiB each) took keychaind to 4.1 GiB. Each is refused before any
    /// derivation now, and alice's worker stays small.
    @Test func hostileRestoresAtOnceCostTheWorkerNoDerivation() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.keychainctl(as: alice, ["owner", "login"], input: "1234\n").status == 0)
        let file = try Self.backupHeader(logN: 20, in: daemon)
        let worker = try #require(daemon.worker(of: alice))
        let line = [CommandRunner.binary.path, "--system-socket", daemon.socket, "restore", file.path]
            .map(SystemDaemonHarness.quoted).joined(separator: " ")
        let four = try daemon.shellCommand(
            as: alice,
            "for i in 1 2 3 4; do (printf 'pw\\n' | \(line) 2>&1 | grep OSStatus) & done; wait")
        // Each is refused as altered (errSecDecode), or, while another is under way, as a second
        // restore (errSecBadReq): none derives a key.
        let refusals = four.stdout.split(separator: "\n").filter { $0.contains("-26275") || $0.contains("-909") }
        #expect(refusals.count == 4, "\(four.stdout)")
        let peak = daemon.status("VmHWM", of: worker) ?? "?"
        print("hostile restores: four refused; alice's worker's peak resident memory \(peak)")
        let kibibytes = Int(peak.split(separator: " ").first ?? "") ?? Int.max
        #expect(kibibytes < 256 << 10, "\(peak)")
    }
}
