import Foundation
import KeychainProtocol
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// System mode: `keychaind --system` as a user of its own, each user's keychain apart, files no
/// user can reach, and clients that trust only a socket of the daemon's user (issue: "System
/// mode: keychaind under its own identity").
@Suite(.serialized) struct SystemModeTests {
    @Test func eachUsersItemsAreTheirsAlone() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let (alice, bob) = (try LocalUser.alice(), try LocalUser.bob())
        let added = try daemon.keychainctl(
            as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "alice's secret")
        #expect(added.status == 0, "\(added.stderr)\n\(daemon.daemonLog)")
        // The same item for bob: another keychain, so no duplicate, and neither sees the other's.
        #expect(try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "mail", "-w"]).status == 44)
        #expect(
            try daemon.keychainctl(as: bob, ["add-generic-password", "-s", "mail", "-a", "me"], input: "bob's secret")
                .status == 0)
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout
                == "alice's secret\n")
        #expect(
            try daemon.keychainctl(as: bob, ["find-generic-password", "-s", "mail", "-w"]).stdout == "bob's secret\n")
        #expect(try daemon.keychainctl(as: bob, ["delete-generic-password", "-s", "mail"]).status == 0)
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout
                == "alice's secret\n")
        // A lock is per user: bob's passcode and lock leave alice's keychain as it was.
        #expect(try daemon.keychainctl(as: bob, ["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.keychainctl(as: bob, ["lock"]).status == 0)
        let status = try daemon.keychainctl(as: alice, ["daemon", "status"])
        #expect(status.stdout.contains("mode: system"), "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("keychain: unlocked (no passcode is set)"), "\(status.stdout)")
        // Each keychain lives in the daemon's state directory under its user's uid.
        for user in [alice, bob] {
            var info = stat()
            #expect(stat(daemon.state.appendingPathComponent(String(user.uid)).path, &info) == 0)
            #expect(info.st_uid == daemon.user.uid)
            #expect(info.st_mode & 0o777 == 0o700)
        }
    }

    @Test func aUserCanNeitherReadNorChangeTheirKeychainsFiles() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "secret")
                .status == 0)
        // A wrong passcode is counted…
        #expect(try daemon.keychainctl(as: alice, ["lock"]).status == 0)
        #expect(try daemon.keychainctl(as: alice, ["unlock"], input: "9999\n").status == 1)
        let own = daemon.state.appendingPathComponent(String(alice.uid)).path
        let files = try FileManager.default.contentsOfDirectory(atPath: own)
        #expect(files.contains("device-secret"), "\(files)")
        // …and alice can neither list, read, copy, delete nor plant anything there.
        for command in [
            "ls \(own)", "cat \(own)/device-secret", "cp \(own)/keybag /tmp/stolen-keybag-\(alice.uid)",
            "rm -f \(own)/device-secret", "touch \(own)/planted", "ls \(daemon.state.path)", "rm -rf \(own)",
        ] {
            let result = try daemon.shellCommand(as: alice, command)
            #expect(result.status != 0, "\(command) succeeded as alice")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: own).sorted() == files.sorted())
        // The failure still counts: the status shows it.
        let status = try daemon.keychainctl(as: alice, ["status"])
        #expect(status.stdout.contains("failed passcode attempts: 1"), "\(status.stdout)\(status.stderr)")
        #expect(try daemon.keychainctl(as: alice, ["unlock"], input: "1234\n").status == 0)
        #expect(try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout == "secret\n")
    }

    @Test func aClientRefusesASocketThatIsNotTheDaemonUsers() throws {
        let alice = try LocalUser.alice()
        // A daemon run by bob (another user, playing the keychain): its socket is bob's.
        let impostor = try SystemDaemonHarness(user: try LocalUser.bob())
        defer { impostor.cleanUp() }
        let refused = try impostor.keychainctl(
            as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "secret")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("is not a socket of the keychaind user"), "\(refused.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: impostor.state.appendingPathComponent(String(alice.uid)).path),
            "the impostor heard the request")

        // A socket file that is the daemon user's, with another user's process behind it (bob's:
        // root's is systemd's, listening for the daemon).
        let daemon = try LocalUser.daemon()
        let bob = try LocalUser.bob()
        let directory = "/tmp/kc-planted-\(UUID().uuidString.prefix(8))"
        mkdir(directory, 0o755)
        chown(directory, daemon.uid, daemon.gid)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = "\(directory)/socket"
        let listener = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(1)
            print("ready", flush=True); c, _ = s.accept(); c.settimeout(5)
            try:
                print("heard", len(c.recv(100)), flush=True)
            except OSError:
                print("heard nothing", flush=True)
            """
        let (read, write) = try ChildSpawn.pipe()
        mkdir(directory + "/bob", 0o755)
        chown(directory + "/bob", bob.uid, bob.gid)
        let pid = try ChildSpawn.spawn(
            bob.setpriv[0],
            Array(bob.setpriv.dropFirst()) + ["/usr/bin/python3", "-c", listener, directory + "/bob/socket"],
            environment: ["PATH": "/usr/bin:/bin"], stdio: (nil, write, nil))
        close(write)
        let output = FileHandle(fileDescriptor: read, closeOnDealloc: true)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        #expect(String(decoding: output.availableData, as: UTF8.self) == "ready\n")
        // Where the daemon's socket should be, as the daemon user's file.
        #expect(rename(directory + "/bob/socket", socket) == 0)
        chown(socket, daemon.uid, daemon.gid)
        let planted = try impostor.keychainctl(
            as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "secret", socket: socket)
        #expect(planted.status == 1)
        #expect(planted.stderr.contains("runs as uid \(bob.uid), not \(daemon.uid)"), "\(planted.stderr)")
        #expect(
            String(decoding: output.readDataToEndOfFile(), as: UTF8.self).hasPrefix("heard 0"),
            "the planted listener received the request")
    }

    @Test func theDaemonKeepsCapSysPtraceAloneAndNeedsIt() throws {
        // Started with a capability it does not need as well: the front keeps CAP_SYS_PTRACE
        // (bit 19) alone, for the workers it starts (inheritable and ambient) and never
        // effective; a worker hands it to its process inspector (effective there, nothing for
        // children) and keeps none, so its children (git, fprintd's tools) get nothing. None
        // gains privileges.
        let daemon = try SystemDaemonHarness(capabilities: ["sys_ptrace", "net_admin"])
        defer { daemon.cleanUp() }
        #expect(daemon.status("CapEff") == "0000000000000000")
        #expect(daemon.status("CapPrm") == "0000000000080000")
        #expect(daemon.status("CapInh") == "0000000000080000")
        #expect(daemon.status("CapAmb") == "0000000000080000")
        #expect(daemon.status("NoNewPrivs") == "1")
        let alice = try LocalUser.alice()
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "s", "-a", "a"], input: "x").status == 0)
        let worker = try #require(daemon.worker(of: alice))
        #expect(daemon.status("CapEff", of: worker) == "0000000000000000")
        #expect(daemon.status("CapPrm", of: worker) == "0000000000000000")
        #expect(daemon.status("CapInh", of: worker) == "0000000000000000")
        #expect(daemon.status("CapAmb", of: worker) == "0000000000000000")
        #expect(daemon.status("NoNewPrivs", of: worker) == "1")
        let inspector = try #require(SystemDaemonHarness.children(of: worker).first)
        #expect(daemon.status("CapEff", of: inspector) == "0000000000080000")
        #expect(daemon.status("CapPrm", of: inspector) == "0000000000080000")
        #expect(daemon.status("CapInh", of: inspector) == "0000000000000000")
        #expect(daemon.status("CapAmb", of: inspector) == "0000000000000000")
        #expect(daemon.status("NoNewPrivs", of: inspector) == "1")
        // With the capability it reads processes and changes none: started without systemd,
        // each denied itself ptrace, process_vm_writev and pidfd_getfd before main (a filter).
        #expect(
            daemon.status("Seccomp") == "2" && daemon.status("Seccomp", of: worker) == "2"
                && daemon.status("Seccomp", of: inspector) == "2")
        #expect(daemon.daemonLog.contains("ptrace, process_vm_writev and pidfd_getfd denied"), "\(daemon.daemonLog)")
        // Without it, the daemon cannot see which program another user runs, and refuses them.
        let blind = try SystemDaemonHarness(capabilities: [])
        defer { blind.cleanUp() }
        #expect(blind.daemonLog.contains("without CAP_SYS_PTRACE"))
        let refused = try blind.keychainctl(
            as: try LocalUser.alice(), ["add-generic-password", "-s", "s", "-a", "a"], input: "x")
        #expect(refused.status == 1)
        #expect(blind.daemonLog.contains("connection refused"), "\(blind.daemonLog)")
    }

    @Test func installPutsTheSystemDaemonInPlaceWithHardenedUnits() throws {
        try #require(getuid() == 0, "installing the system daemon needs root (CI runs as root)")
        let daemon = try LocalUser.daemon()
        let shell = try CommandRunner()
        defer { try? FileManager.default.removeItem(at: shell.home) }
        let installed = try shell.run(["daemon", "install", "--system"])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("systemctl enable --now keychaind.socket"))
        var info = stat()
        #expect(stat("/usr/local/libexec/keychaind", &info) == 0 && info.st_uid == 0 && info.st_mode & 0o777 == 0o755)
        #expect(
            stat(KeychainPaths.systemStateDirectory, &info) == 0 && info.st_uid == daemon.uid
                && info.st_mode & 0o777 == 0o700)
        let service = try String(contentsOfFile: "/etc/systemd/system/keychaind.service", encoding: .utf8)
        for line in [
            "User=keychaind", "AmbientCapabilities=CAP_SYS_PTRACE", "CapabilityBoundingSet=CAP_SYS_PTRACE",
            "ProtectSystem=strict", "ProtectHome=yes", "NoNewPrivileges=yes", "MemoryDenyWriteExecute=yes",
            "RestrictAddressFamilies=AF_UNIX",
            "SystemCallFilter=~ptrace process_vm_writev pidfd_getfd", "LimitNOFILE=65536", "DevicePolicy=closed",
            "SystemCallFilter=landlock_create_ruleset landlock_add_rule landlock_restrict_self",
            "DeviceAllow=/dev/tpmrm0 rw",
        ] {
            #expect(service.contains(line + "\n"), "keychaind.service lacks \(line)")
        }
        let socket = try String(contentsOfFile: "/etc/systemd/system/keychaind.socket", encoding: .utf8)
        #expect(
            socket.contains("ListenStream=\(KeychainPaths.systemSocket)\n") && socket.contains("SocketUser=keychaind\n")
        )
        // systemd's own score of the unit's exposure (0 best, 10 worst; 1.1 when written).
        let analysis = try shell.script(
            "systemd-analyze security --offline=true /etc/systemd/system/keychaind.service 2>&1 | grep 'Overall "
                + "exposure'"
        )
        let score = analysis.stdout.split(separator: " ").compactMap { Double($0) }.first
        #expect(score.map { $0 <= 1.5 } == true, "\(analysis.stdout)")
        // The polkit rule that lets the daemon verify its users' fingers (polkit is installed).
        #expect(
            try String(contentsOfFile: "/etc/polkit-1/rules.d/50-keychaind-fprintd.rules", encoding: .utf8)
                == FingerprintPolkitRule.text)
        try checkThePromptAgentInstalled(installed, shell)
        // Installed once more, it replaces what it put in place and creates nothing twice.
        #expect(try shell.run(["daemon", "install", "--system"]).status == 0)
    }

    /// The prompt agent `daemon install --system` puts in place starts with each user's session
    /// (a user unit for every user), and the daemon takes it as the agent by the registration
    /// written with it. (Run from the installation's test, which writes the same files.)
    func checkThePromptAgentInstalled(_ installed: CommandRunner.Output, _ shell: CommandRunner) throws {
        #expect(installed.stdout.contains("systemctl --global enable keychain-prompt-agent.service"))
        let program = "/usr/local/libexec/keychain-prompt-agent"
        var info = stat()
        #expect(stat(program, &info) == 0 && info.st_uid == 0 && info.st_mode & 0o777 == 0o755)
        let unit = try String(contentsOfFile: "/etc/systemd/user/keychain-prompt-agent.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(program) prompt-agent\n") && unit.contains("WantedBy=default.target\n"))
        let runtime = shell.home.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let verified = try shell.script(
            "XDG_RUNTIME_DIR='\(runtime.path)' systemd-analyze verify --user "
                + "/etc/systemd/user/keychain-prompt-agent.service 2>&1")
        #expect(verified.status == 0, "\(verified.stdout)")

        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        try FileManager.default.copyItem(
            atPath: "\(KeychainPaths.systemAppRegistry)/keychain-prompt-agent.json",
            toPath: daemon.registry.appendingPathComponent("keychain-prompt-agent.json").path)
        let agents = try PromptAgentProcesses(
            daemon, users: [try LocalUser.alice()], program: URL(fileURLWithPath: program))
        agents.stop()
    }

    @Test func theSystemDaemonRefusesToRunAsRoot() throws {
        try #require(getuid() == 0, "needs root (CI runs as root)")
        let base = "/tmp/kcsys-root-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let shell = try CommandRunner()
        defer { try? FileManager.default.removeItem(at: shell.home) }
        let result = try shell.script(
            "'\(SystemDaemonHarness.keychaind)' --system --state-directory \(base)/state --runtime-directory "
                + "\(base)/run"
        )
        #expect(result.status != 0)
        #expect(result.stderr.contains("never as root"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(base)/run/socket"))
    }
    /// The disk restored from a copy under a running daemon (an evil maid, a backup put back):
    /// the old row of alice's password is refused, never returned, and the audit log says why.
    @Test func anOldRowPutBackOnDiskIsRefusedAndAudited() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "old secret")
                .status == 0)
        let database = daemon.state.appendingPathComponent("\(alice.uid)/keychain.db").path
        let root = try CommandRunner()
        defer { try? FileManager.default.removeItem(at: root.home) }
        let copy = try root.script(
            "sqlite3 \(SystemDaemonHarness.quoted(database)) 'CREATE TABLE copied AS SELECT * FROM items'")
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(
            try daemon.keychainctl(
                as: alice, ["add-generic-password", "-U", "-s", "mail", "-a", "me"], input: "new secret"
            ).status == 0)
        let restore = try root.script(
            "sqlite3 \(SystemDaemonHarness.quoted(database)) 'DELETE FROM items; INSERT INTO items SELECT * FROM "
                + "copied; DROP TABLE copied'"
        )
        #expect(restore.status == 0, "\(restore.stderr)")
        let read = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"])
        #expect(read.status != 0 && !read.stdout.contains("old secret"), "\(read.stdout)\(read.stderr)")
        #expect(read.stderr.contains("older copy"), "\(read.stderr)")
        #expect(daemon.daemonLog.contains("integrity check failed"), "\(daemon.daemonLog)")
    }
    /// `keychainctl daemon migrate-to-system` moves alice's per-user keychain (passcode, items)
    /// into the system daemon and removes the old files; killed at random points (the client, or
    /// the daemon), then run again, it never loses an item.
    @Test func migrationToTheSystemDaemonLosesNothingWhenKilledAtRandomPoints() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        let home = daemon.base.appendingPathComponent("alice-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chown(home.path, alice.uid, alice.gid)
        chmod(home.path, 0o700)
        let keychain = home.appendingPathComponent("data/keychain")
        let pristine = daemon.base.appendingPathComponent("pristine-keychain")
        let environment = ["env", "XDG_DATA_HOME=\(home.path)/data", "XDG_RUNTIME_DIR=\(home.path)/run"]
        let embedded = environment + ["KEYCHAIN_MODE=embedded"]
        let names = (0..<6).map { "service-\($0)" }
        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n", prefix: embedded).status == 0)
        for name in names {
            let added = try daemon.keychainctl(
                as: alice, ["add-generic-password", "-s", name, "-a", "me"], input: "secret of \(name)",
                prefix: embedded)
            #expect(added.status == 0, "\(added.stderr)")
        }
        let root = try CommandRunner()
        defer { try? FileManager.default.removeItem(at: root.home) }
        #expect(try root.script("cp -a \(keychain.path) \(pristine.path)").status == 0)
        let own = daemon.state.appendingPathComponent(String(alice.uid)).path
        let migrate =
            ([
                alice.setpriv, environment,
                [CommandRunner.binary.path, "--system-socket", daemon.socket, "daemon", "migrate-to-system"],
            ]
            .flatMap { $0 }).map(SystemDaemonHarness.quoted).joined(separator: " ")

        for round in 0..<10 {
            // Alice as before the move: her per-user keychain, no system one.
            daemon.stop()
            #expect(
                try root.script(
                    "rm -rf \(own) \(keychain.path) \(keychain.path).migrated && cp -a \(pristine.path) "
                        + "\(keychain.path)"
                ).status == 0)
            try daemon.restart()
            // A random point in each tenth of the first second (a move takes about 0.7 s in a
            // debug build here: the start, the upload, the passcode check, the rename, the removal).
            let delay = 0.1 * (Double(round) + Double.random(in: 0...1))
            let killsDaemon = round % 3 == 2
            let victim = killsDaemon ? "\(daemon.pid)" : "$!"
            let killed = try root.script(
                "printf '1234\\n' | \(migrate) >/dev/null 2>&1 & sleep \(delay); kill -9 \(victim) 2>/dev/null; "
                    + "wait; true"
            )
            #expect(killed.status == 0)
            if killsDaemon { try daemon.restart() }
            // Whenever it was killed, one whole keychain is in place: the per-user one or the system one.
            let moved = FileManager.default.fileExists(atPath: own + "/keybag")
            let kept = FileManager.default.fileExists(atPath: keychain.appendingPathComponent("keybag").path)
            #expect(moved || kept, "round \(round): killed after \(delay) s, neither keychain is in place")
            print(
                "migration round \(round): killed the \(killsDaemon ? "daemon" : "client") after \(Int(delay * 1000)) "
                    + "ms; system keychain \(moved ? "in place" : "absent"), "
                    + "per-user files \(kept ? "kept" : "removed")"
            )
            if kept {
                // Run again to the end: it moves the keychain, or finds it moved already.
                let again = try root.script("printf '1234\\n' | \(migrate)")
                // A client killed after it asked to finish leaves the daemon finishing the move
                // (CI saw it land after `moved` was read, and, under load, its last fsync before
                // the keybag's rename outlast the run again): the system keychain is then whole
                // within seconds and the run again refuses to move over it.
                var movedByNow = FileManager.default.fileExists(atPath: own + "/keybag")
                for _ in 0..<100 where again.status != 0 && !movedByNow {
                    usleep(100_000)
                    movedByNow = FileManager.default.fileExists(atPath: own + "/keybag")
                }
                #expect(
                    again.status == 0 || (movedByNow && again.stderr.contains("already has a keychain")),
                    "round \(round), delay \(delay): \(again.stdout)\(again.stderr)\n\(daemon.daemonLog)")
                if again.status == 0 {
                    #expect(
                        !FileManager.default.fileExists(atPath: keychain.path), "the per-user files were not removed")
                }
            }
            // Every item, with its secret, in the system keychain, under its passcode.
            #expect(
                try daemon.keychainctl(as: alice, ["unlock"], input: "1234\n").status == 0,
                "round \(round): \(daemon.daemonLog)")
            #expect(try daemon.keychainctl(as: alice, ["owner", "login"], input: "1234\n").status == 0)
            for name in names {
                let found = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", name, "-w"])
                #expect(
                    found.stdout == "secret of \(name)\n",
                    "round \(round), delay \(delay), killing the \(killsDaemon ? "daemon" : "client"): \(found.stderr)")
            }
        }
        // Moved, the keychain is refused a second time, and the system copy is untouched.
        #expect(try root.script("cp -a \(pristine.path) \(keychain.path)").status == 0)
        let twice = try root.script("printf '1234\\n' | \(migrate)")
        #expect(twice.status != 0 && twice.stderr.contains("already has a keychain"), "\(twice.stderr)")
        #expect(
            FileManager.default.fileExists(atPath: keychain.appendingPathComponent("keybag").path),
            "a refused move removed the per-user files")
    }
}
