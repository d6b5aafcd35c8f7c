import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Three machines (three keychains, each with its own device secret and its own keychaind) and a
/// bare repository served by `git daemon` on loopback: `keychainctl sync` as a person runs it.
@Suite(.serialized) struct SyncCommandTests {
    /// A circle of machines on one remote; ``end()`` stops every daemon.
    final class Circle {
        let remote: GitDaemon
        var machines: [String: CommandRunner] = [:]

        init(_ names: [String]) throws {
            remote = try GitDaemon()
            do {
                for name in names {
                    let machine = try CommandRunner.withPasscode(simulator: false)
                    machines[name] = machine
                    let login = try machine.run(["owner", "login"], input: "1234\n")
                    guard login.status == 0 else {
                        throw SetUpFailure(command: ["owner", "login"], stderr: login.stderr)
                    }
                }
                let first = try self[names[0]].run(["sync", "setup", remote.url, "--name", names[0]])
                guard first.status == 0 else { throw SetUpFailure(command: ["sync", "setup"], stderr: first.stderr) }
                for name in names.dropFirst() { try join(name, approvedBy: names[0]) }
            } catch {
                end()
                throw error
            }
        }

        subscript(name: String) -> CommandRunner { machines[name]! }

        /// `name` asks to join; `member` answers; `name` shows the code; `member` approves it with
        /// that code; `name` confirms it (Docs/Sync.md, "Joining").
        func join(_ name: String, approvedBy member: String, device: String? = nil) throws {
            let steps: [(CommandRunner, [String])] = [
                (self[name], ["sync", "join", remote.url, "--name", name]),
                (self[member], ["sync", "approve"] + (device.map { ["--device", $0] } ?? [])),
            ]
            for (machine, arguments) in steps {
                let run = try machine.run(arguments)
                guard run.status == 0 else { throw SetUpFailure(command: arguments, stderr: run.stderr) }
            }
            let shown = try self[name].run(["sync", "join"])
            guard let code = SyncJoinCode.shown(shown.stdout) else {
                throw SetUpFailure(command: ["sync", "join"], stderr: shown.stderr + shown.stdout)
            }
            for (machine, arguments) in [
                (self[member], ["sync", "approve", code]), (self[name], ["sync", "join", "--code", code]),
            ] {
                let run = try machine.run(arguments)
                guard run.status == 0 else { throw SetUpFailure(command: arguments, stderr: run.stderr) }
            }
        }

        /// `sync now` on each machine in turn, `rounds` times.
        func syncAll(rounds: Int = 2) throws {
            for _ in 0..<rounds {
                for name in machines.keys.sorted() {
                    let synced = try self[name].run(["sync", "now"])
                    #expect(synced.status == 0, "\(name): \(synced.stderr)")
                }
            }
        }

        func secret(_ service: String, on name: String) throws -> String? {
            let found = try self[name].run(["find-generic-password", "-s", service, "-w"])
            return found.status == 0 ? String(found.stdout.dropLast()) : nil
        }

        func end() {
            for machine in machines.values { machine.cleanUp() }
            remote.stop()
        }
    }

    @Test func anItemAddedOnOneAppearsOnTheOthersAndOnlySynchronizableOnes() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        let laptop = circle["laptop"]
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable"], secret: "mail secret"))
        #expect(try laptop.addPassword("local", account: "me", secret: "stays here"))
        // Synchronizable, but ThisDeviceOnly: its accessibility keeps it here, as on iOS.
        #expect(
            try laptop.addPassword(
                "pinned", account: "me", ["--synchronizable", "--accessible", "WhenUnlockedThisDeviceOnly"],
                secret: "stays here too"))
        let synced = try laptop.run(["sync", "now"])
        #expect(synced.status == 0 && synced.stdout.contains("published 1"), "\(synced.stdout)\(synced.stderr)")
        try circle.syncAll(rounds: 1)
        for name in ["desktop", "server"] {
            #expect(try circle.secret("mail", on: name) == "mail secret", "\(name)")
            #expect(try circle.secret("local", on: name) == nil, "\(name)")
            #expect(try circle.secret("pinned", on: name) == nil, "\(name)")
        }
        let devices = try circle["server"].run(["sync", "devices"])
        #expect(devices.stdout.split(separator: "\n").count == 3, "\(devices.stdout)")
        #expect(devices.stdout.contains("server  (this machine)"), "\(devices.stdout)")

        // The remote holds no secret, no attribute and no name in the clear.
        let files = try circle.remote.files()
        #expect(files.keys.filter { $0.hasPrefix("devices/") }.count == 4, "\(files.keys.sorted())")
        for (path, bytes) in files {
            for clear in ["mail secret", "mail", "stays here"] {
                #expect(bytes.range(of: Data(clear.utf8)) == nil, "\(path) holds \(clear)")
            }
        }
    }

    @Test func concurrentChangesConvergeToTheLaterOneAndADeleteReachesEveryMachine() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        #expect(try circle["laptop"].addPassword("vpn", account: "me", ["--synchronizable"], secret: "first"))
        try circle.syncAll(rounds: 1)
        // Two machines change the item between syncs: the desktop's change is the later one.
        #expect(
            try circle["laptop"].addPassword("vpn", account: "me", ["--synchronizable", "-U"], secret: "laptop's"))
        usleep(50_000)
        #expect(
            try circle["desktop"].addPassword("vpn", account: "me", ["--synchronizable", "-U"], secret: "desktop's"))
        // The laptop publishes first; the desktop's later change still wins everywhere.
        try circle.syncAll(rounds: 2)
        for name in ["laptop", "desktop", "server"] {
            #expect(try circle.secret("vpn", on: name) == "desktop's", "\(name)")
        }
        // The laptop's version lost, and is kept.
        let history = try circle["server"].run(["sync", "history", "--show-secrets"])
        #expect(history.stdout.contains("genp  vpn  me  from laptop"), "\(history.stdout)\(history.stderr)")
        #expect(history.stdout.contains("laptop's") && !history.stdout.contains("first"), "\(history.stdout)")
        // The laptop changes the item again: its losing version goes on in its next record.
        #expect(
            try circle["laptop"].addPassword("vpn", account: "me", ["--synchronizable", "-U"], secret: "laptop's next"))
        try circle.syncAll(rounds: 2)
        #expect(try circle.secret("vpn", on: "desktop") == "laptop's next")
        let kept = try circle["desktop"].run(["sync", "history", "--show-secrets"])
        #expect(kept.stdout.contains("laptop's\n") || kept.stdout.hasSuffix("laptop's"), "\(kept.stdout)")

        #expect(try circle["server"].run(["delete-generic-password", "-s", "vpn"]).status == 0)
        try circle.syncAll(rounds: 2)
        for name in ["laptop", "desktop", "server"] {
            #expect(try circle.secret("vpn", on: name) == nil, "\(name)")
        }
    }

    @Test func machinesSyncingAtOnceFetchMergeAndPushAgain() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        for round in 0..<3 {
            for name in ["laptop", "desktop", "server"] {
                #expect(
                    try circle[name].addPassword(
                        "\(name) \(round)", account: "me", ["--synchronizable"], secret: "\(name) \(round)"))
            }
            // All three at once: two pushes are refused as the remote moved on, and go again.
            let running = try ["laptop", "desktop", "server"].map { name in
                let sync = try circle[name].launch(["sync", "now"])
                try sync.stdin.fileHandleForWriting.close()
                return (name, sync)
            }
            for (name, sync) in running {
                let done = sync.finish()
                #expect(done.status == 0 && !done.stdout.contains("refused:"), "\(name): \(done.stdout)\(done.stderr)")
            }
        }
        try circle.syncAll(rounds: 1)
        for reader in ["laptop", "desktop", "server"] {
            for writer in ["laptop", "desktop", "server"] {
                for round in 0..<3 {
                    #expect(try circle.secret("\(writer) \(round)", on: reader) == "\(writer) \(round)", "\(reader)")
                }
            }
        }
    }

    @Test func keychaindSyncsByItselfAfterAWriteAndOnItsTimer() throws {
        let circle = try Circle(["laptop", "desktop"])
        defer { circle.end() }
        // The desktop's keychaind syncs every second; the laptop's only after its writes.
        let desktop = circle["desktop"]
        for (arguments, input) in [
            (["daemon", "stop"], ""), (["daemon", "start", "--sync-interval", "1"], ""), (["unlock"], "1234\n"),
        ] {
            let run = try desktop.run(arguments, input: input)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        #expect(try circle["laptop"].addPassword("wifi", account: "home", ["--synchronizable"], secret: "hunter2"))
        let deadline = Date().addingTimeInterval(30)
        while try circle.secret("wifi", on: "desktop") == nil, Date() < deadline { usleep(200_000) }
        #expect(try circle.secret("wifi", on: "desktop") == "hunter2")
        #expect(try desktop.run(["owner", "login"], input: "1234\n").status == 0)
        let status = try desktop.run(["sync", "status"])
        #expect(status.stdout.contains("last sync:") && !status.stdout.contains("failing"), "\(status.stdout)")
    }

    /// Issue 52: a remote that crashes keychaind during a sync must not crash it at every start
    /// after. A sync that began and never ended (the file it leaves, `sync-running`, put there
    /// as a killed keychaind leaves it) holds keychaind's own syncs until the owner's `sync
    /// now`, and `sync status` says why.
    @Test func afterASyncThatWasCutOffKeychaindWaitsForTheOwner() throws {
        let circle = try Circle(["laptop", "desktop"])
        defer { circle.end() }
        let laptop = circle["laptop"]
        #expect(try laptop.run(["daemon", "stop"]).status == 0)
        try Data("2026-11-28T10:00:00Z".utf8).write(to: laptop.keychainDirectory.appendingPathComponent("sync-running"))
        chmod(laptop.keychainDirectory.appendingPathComponent("sync-running").path, 0o600)
        for (arguments, input) in [(["daemon", "start", "--sync-interval", "1"], ""), (["unlock"], "1234\n")] {
            let run = try laptop.run(arguments, input: input)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        #expect(try laptop.addPassword("held", account: "me", ["--synchronizable"], secret: "s"))
        sleep(4)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("held", on: "desktop") == nil, "keychaind synced by itself after a cut-off sync")
        #expect(try laptop.run(["owner", "login"], input: "1234\n").status == 0)
        let status = try laptop.run(["sync", "status"])
        #expect(
            status.stdout.contains("held: a sync that began at 2026-11-28T10:00:00Z never ended"), "\(status.stdout)")
        // The owner's sync: its own mark, while it runs, is no cut-off sync.
        let owners = try laptop.run(["sync", "now"])
        #expect(owners.status == 0 && !owners.stdout.contains("held:"), "\(owners.stdout)")
        // The cut-off mark is gone. keychaind's own syncs resume now (every second here), and one
        // under way has its own mark, with its own time.
        let mark = try? String(
            contentsOf: laptop.keychainDirectory.appendingPathComponent("sync-running"), encoding: .utf8)
        #expect(mark != "2026-11-28T10:00:00Z", "the cut-off sync's mark outlived the owner's sync")
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("held", on: "desktop") == "s")
        #expect(!(try laptop.run(["sync", "status"]).stdout.contains("held:")))
    }

    /// Issue 56: after the whole remote was reset to an older commit, each machine refused the
    /// others' older folders, rightly, but none published its own records again, so an item the
    /// desktop added after the reset point never reached the laptop. A machine that finds its own
    /// folder older than what it published publishes it again, and says so.
    @Test func aRolledBackRemoteGetsEachMachinesRecordsAgain() throws {
        let circle = try Circle(["laptop", "desktop"])
        defer { circle.end() }
        #expect(try circle["laptop"].addPassword("before", account: "me", ["--synchronizable"], secret: "b"))
        try circle.syncAll(rounds: 1)
        let point = try circle.remote.head()
        #expect(try circle["desktop"].addPassword("after", account: "me", ["--synchronizable"], secret: "a"))
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        try circle.remote.reset(to: point)
        let again = try circle["desktop"].run(["sync", "now"])
        #expect(again.status == 0 && again.stdout.contains("the remote went back"), "\(again.stdout)\(again.stderr)")
        #expect(try circle["laptop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("after", on: "laptop") == "a")
        #expect(try circle.secret("before", on: "desktop") == "b")
        #expect(try circle["desktop"].run(["sync", "status"]).stdout.contains("records published again"))
    }

    @Test func anUnreachableRemoteLeavesLocalWritesAloneAndStatusSaysSince() throws {
        let circle = try Circle(["laptop"])
        defer { circle.end() }
        // A remote git would take for an option is refused before anything else.
        let option = try circle["laptop"].run(["sync", "join", "--", "--upload-pack=touch /tmp/kc-sync-pwned"])
        #expect(option.status != 0 && option.stderr.contains("never an option"), "\(option.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/kc-sync-pwned"))
        circle.remote.stop()
        #expect(try circle["laptop"].addPassword("offline", account: "me", ["--synchronizable"], secret: "kept"))
        let failed = try circle["laptop"].run(["sync", "now"])
        #expect(failed.status != 0, "\(failed.stdout)")
        #expect(try circle.secret("offline", on: "laptop") == "kept")
        let status = try circle["laptop"].run(["sync", "status"])
        #expect(status.stdout.contains("failing since"), "\(status.stdout)")
    }

    @Test func killingAMachineMidSyncLosesNothingAndLeavesTheRemoteConsistent() throws {
        let circle = try Circle(["laptop", "desktop"])
        defer { circle.end() }
        let laptop = circle["laptop"]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<6 {
            for index in 0..<3 {
                #expect(
                    try laptop.addPassword(
                        "item \(round)-\(index)", account: "me", ["--synchronizable"], secret: "secret \(round)"))
            }
            #expect(
                try circle["desktop"].addPassword("desk \(round)", account: "me", ["--synchronizable"], secret: "d"))
            // keychaind killed at a random point of a sync: a fetch, the apply, the push, the state.
            let syncing = try laptop.launch(["sync", "now"])
            try syncing.stdin.fileHandleForWriting.close()
            usleep(UInt32.random(in: 0..<1_500_000, using: &generator))
            if let pid = try laptop.daemonPID() { kill(pid, SIGKILL) }
            _ = syncing.finish()
            for (arguments, input) in [(["unlock"], "1234\n"), (["owner", "login"], "1234\n")] {
                #expect(try laptop.run(arguments, input: input).status == 0, "\(arguments)")
            }
            let again = try laptop.run(["sync", "now"])
            #expect(again.status == 0 && !again.stdout.contains("refused:"), "\(again.stdout)\(again.stderr)")
            let desktop = try circle["desktop"].run(["sync", "now"])
            #expect(desktop.status == 0 && !desktop.stdout.contains("refused:"), "\(desktop.stdout)\(desktop.stderr)")
        }
        #expect(try laptop.run(["sync", "now"]).status == 0)
        for round in 0..<6 {
            for name in ["laptop", "desktop"] {
                for index in 0..<3 {
                    #expect(try circle.secret("item \(round)-\(index)", on: name) == "secret \(round)", "\(name)")
                }
                #expect(try circle.secret("desk \(round)", on: name) == "d", "\(name)")
            }
        }
    }

    @Test func aSetupThatFailedLeavesNothingInTheWayOfTheNext() throws {
        let remote = try GitDaemon()
        defer { remote.stop() }
        let machine = try CommandRunner.withPasscode(simulator: false)
        defer { machine.cleanUp() }
        #expect(try machine.run(["owner", "login"], input: "1234\n").status == 0)
        let unreachable = try machine.run(["sync", "setup", "git://127.0.0.1:1/none.git"])
        #expect(unreachable.status != 0, "\(unreachable.stdout)")
        // Issue 52: `fd::0` held the owner's sync for git's whole timeout (300 s); a transport
        // helper or a scheme off the allow-list is refused before git starts.
        for hostile in ["fd::0", "ext::sh -c id", "http://127.0.0.1:1/x.git", "ftp://127.0.0.1/x.git"] {
            let started = Date()
            let refused = try machine.run(["sync", "setup", hostile])
            #expect(refused.status != 0 && refused.stderr.contains("is refused"), "\(hostile): \(refused.stderr)")
            #expect(Date().timeIntervalSince(started) < 10, "\(hostile)")
        }
        // The clone the failed setup made named that remote; the next setup starts afresh.
        let setUp = try machine.run(["sync", "setup", remote.url])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        #expect(try machine.run(["sync", "status"]).stdout.contains("sync: \(remote.url), 1 devices"))
        #expect(try remote.files()["circle/list"] != nil)
    }

    /// Issue 52: `erase` left the sync state behind, so every later `sync now` failed with
    /// errSecDecode (its identity key was erased) and `sync setup` refused ("set up already").
    @Test func eraseTakesSyncWithIt() throws {
        let remote = try GitDaemon()
        defer { remote.stop() }
        let machine = try CommandRunner.withPasscode(simulator: false)
        defer { machine.cleanUp() }
        #expect(try machine.run(["owner", "login"], input: "1234\n").status == 0)
        #expect(try machine.run(["sync", "setup", remote.url]).status == 0)
        let erased = try machine.run(["erase"], input: "1234\n")
        #expect(erased.status == 0, "\(erased.stderr)")
        #expect(try machine.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try machine.run(["owner", "login"], input: "1234\n").status == 0)
        let status = try machine.run(["sync", "status"])
        #expect(status.status == 0 && !status.stdout.contains(remote.url), "\(status.stdout)\(status.stderr)")
        let other = try GitDaemon()
        defer { other.stop() }
        let setUp = try machine.run(["sync", "setup", other.url])
        #expect(setUp.status == 0, "\(setUp.stderr)")
    }

    @Test func aRemovedDeviceReadsNothingWrittenAfter() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        #expect(try circle["laptop"].addPassword("before", account: "me", ["--synchronizable"], secret: "old"))
        try circle.syncAll(rounds: 1)
        #expect(try circle.secret("before", on: "server") == "old")

        let devices = try circle["laptop"].run(["sync", "devices"]).stdout
        let server = try #require(
            devices.split(separator: "\n").first { $0.contains("  server") }?.split(separator: " ").first)
        let removed = try circle["laptop"].run(["sync", "remove-device", String(server.prefix(8))])
        #expect(removed.status == 0 && removed.stdout.contains("epoch 2"), "\(removed.stdout)\(removed.stderr)")
        #expect(try circle["laptop"].addPassword("after", account: "me", ["--synchronizable"], secret: "new"))
        #expect(try circle["laptop"].run(["sync", "now"]).status == 0)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("after", on: "desktop") == "new")

        let locked = try circle["server"].run(["sync", "now"])
        #expect(locked.status != 0 && locked.stderr.contains("removed from the circle"), "\(locked.stderr)")
        #expect(try circle.secret("after", on: "server") == nil)
        #expect(try circle.secret("before", on: "server") == "old", "what it had stays")
        // What the remote holds now is sealed under a key the removed device was never given.
        let wraps = try FileManager.default.subpathsOfDirectory(atPath: circle.remote.repository.path)
        #expect(!wraps.isEmpty)
    }
}

/// The remote is hostile: its host, or anyone with write access to it, edits, moves, replays and
/// rolls back what it holds, and adds devices of its own. Each is refused, said by `sync now`,
/// and changes nothing in the keychain; once the remote is put back, sync goes on.
@Suite(.serialized) struct SyncTamperTests {
    @Test func everyKindOfTamperingIsRefusedAndChangesNothing() throws {
        let circle = try SyncCommandTests.Circle(["laptop", "desktop"])
        defer { circle.end() }
        let laptop = circle["laptop"]
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable"], secret: "v1"))
        #expect(try laptop.run(["sync", "now"]).status == 0)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("mail", on: "desktop") == "v1")
        // The laptop's one record, and its folder.
        let record = try #require(
            circle.remote.files().keys.first { $0.hasPrefix("devices/") && !$0.hasSuffix("/head") })
        let laptopFolder = String(record.prefix(through: try #require(record.lastIndex(of: "/"))))

        /// `desktop` syncs over a remote `tamper` changed: refused, and mail stays `expected`.
        /// The remote is put back after.
        func refused(_ what: String, expected: String, _ tamper: (URL) throws -> Void) throws {
            let before = try circle.remote.head()
            try circle.remote.tamper(tamper)
            let synced = try circle["desktop"].run(["sync", "now"])
            #expect(synced.stdout.contains("refused:"), "\(what): \(synced.stdout)\(synced.stderr)")
            #expect(try circle.secret("mail", on: "desktop") == expected, "\(what)")
            try circle.remote.reset(to: before)
        }

        // The laptop's next version, with a byte of its sealed part flipped on the remote.
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable", "-U"], secret: "v2"))
        #expect(try laptop.run(["sync", "now"]).status == 0)
        let v2 = try circle.remote.head()
        let v2Files = try circle.remote.files()
        try refused("an edited record", expected: "v1") { clone in
            var bytes = try Data(contentsOf: clone.appendingPathComponent(record))
            bytes[100] ^= 1
            try bytes.write(to: clone.appendingPathComponent(record))
        }
        try refused("a record moved to another name", expected: "v1") { clone in
            let moved = laptopFolder + String(repeating: "ab", count: 16)
            try FileManager.default.moveItem(
                at: clone.appendingPathComponent(record), to: clone.appendingPathComponent(moved))
        }
        try refused("a record removed", expected: "v1") { clone in
            try FileManager.default.removeItem(at: clone.appendingPathComponent(record))
        }
        try refused("a head forged", expected: "v1") { clone in
            var bytes = try Data(contentsOf: clone.appendingPathComponent(laptopFolder + "head"))
            bytes[bytes.count - 70] ^= 1
            try bytes.write(to: clone.appendingPathComponent(laptopFolder + "head"))
        }
        // The list refused, the laptop's authentic v2 is taken, and the circle stays as it was.
        try refused("a device added by someone outside the circle", expected: "v2") { clone in
            var bytes = try Data(contentsOf: clone.appendingPathComponent("circle/list"))
            bytes[40] ^= 1
            try bytes.write(to: clone.appendingPathComponent("circle/list"))
        }
        let devices = try circle["desktop"].run(["sync", "devices"]).stdout
        #expect(devices.split(separator: "\n").count == 2, "\(devices)")
        // Put back as the laptop wrote it: the desktop takes v2.
        try circle.remote.reset(to: v2)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("mail", on: "desktop") == "v2")

        // v3, then the remote rolled back to v2 whole, then v2's record replayed under v3's head.
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable", "-U"], secret: "v3"))
        #expect(try laptop.run(["sync", "now"]).status == 0)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("mail", on: "desktop") == "v3")
        let v3 = try circle.remote.head()
        try circle.remote.reset(to: v2)
        let rolledBack = try circle["desktop"].run(["sync", "now"])
        #expect(rolledBack.stdout.contains("refused:"), "a rollback: \(rolledBack.stdout)\(rolledBack.stderr)")
        #expect(try circle.secret("mail", on: "desktop") == "v3")
        try circle.remote.reset(to: v3)
        try refused("an older record replayed", expected: "v3") { clone in
            try v2Files[record]?.write(to: clone.appendingPathComponent(record))
        }

        // Sync goes on once the remote holds what the devices wrote.
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable", "-U"], secret: "v4"))
        #expect(try laptop.run(["sync", "now"]).status == 0)
        // Each refusal is in the desktop's audit log, as critical.
        let log = try String(
            contentsOf: circle["desktop"].runtime.appendingPathComponent("keychain/keychaind.log"), encoding: .utf8)
        let audited = log.split(separator: "\n").filter { $0.contains("sync refused what the remote holds") }
        #expect(audited.count >= 7 && audited.allSatisfy { $0.contains("critical") }, "\(log)")
        let clean = try circle["desktop"].run(["sync", "now"])
        #expect(clean.status == 0 && !clean.stdout.contains("refused:"), "\(clean.stdout)\(clean.stderr)")
        #expect(try circle.secret("mail", on: "desktop") == "v4")
    }
}
