import Foundation
import KeychainProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// keychaind: the keys in a process of their own, each app seeing its own items, the caller
/// known from the kernel (issue: "keychaind: the Secure Enclave in its own process").
@Suite(.serialized) struct DaemonTests {
    /// Issue 56: a client whose keychaind went away as it connected was told "a keychaind older
    /// than this program sends none". A listener that closes every connection at once, as a
    /// daemon killed then does, is said to be that.
    @Test func aDaemonThatClosesBeforeItsGreetingIsSaidToHaveStopped() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let socket = shell.runtime.appendingPathComponent("keychain/socket").path
        try FileManager.default.createDirectory(
            at: shell.runtime.appendingPathComponent("keychain"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let listener = try shell.script(
            """
            python3 -c '
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
            print("ready", flush=True)
            for _ in range(4):
                s.accept()[0].close()
            ' '\(socket)' > /dev/null &
            sleep 0.5
            "$KEYCHAINCTL" status; echo "status $?"
            kill %1
            """)
        #expect(listener.stdout.contains("status 1"), "\(listener.stdout)")
        #expect(
            listener.stderr.contains("keychaind closed the connection before it greeted this process: it stopped"),
            "\(listener.stderr)")
        #expect(!listener.stderr.contains("older than this program"))
    }

    /// Sync's git runs as `keychaind --confined-exec OWN ROOT git …`: under Landlock it writes in
    /// sync's directory alone and reads nothing else beneath the keychain's parent (a keybag
    /// beside it, another user's keychain in the system daemon's state).
    @Test func gitOnARemotesBytesIsConfinedToSyncsDirectory() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let root = shell.home.appendingPathComponent("state")
        let own = root.appendingPathComponent("1000/sync-remote")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try Data("keybag".utf8).write(to: root.appendingPathComponent("1000/keybag"))
        try Data("theirs".utf8).write(to: root.appendingPathComponent("other"))
        let confined = [SystemDaemonHarness.keychaind, "--confined-exec", own.path, root.path, "/bin/sh", "-c"]
            .map(SystemDaemonHarness.quoted).joined(separator: " ")
        func run(_ command: String) throws -> Int32 {
            try shell.script("\(confined) \(SystemDaemonHarness.quoted(command)) 2>/dev/null").status
        }
        #expect(try run("echo x > '\(own.path)/written' && cat '\(own.path)/written'") == 0)
        #expect(try run("cat /etc/os-release") == 0, "reading elsewhere")
        #expect(try run("cat '\(root.path)/1000/keybag'") != 0, "read the keybag beside sync's directory")
        #expect(try run("cat '\(root.path)/other'") != 0, "read another keychain's file")
        #expect(try run("echo x > '\(root.path)/1000/keybag'") != 0, "wrote the keybag")
        #expect(try run("echo x > '\(shell.home.path)/outside'") != 0, "wrote outside")
        #expect(try String(contentsOf: root.appendingPathComponent("1000/keybag"), encoding: .utf8) == "keybag")
    }

    @Test func twoExecutablesCannotSeeEachOthersItems() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let first = try daemon.copyOfKeychainctl(named: "app-one")
        let second = try daemon.copyOfKeychainctl(named: "app-two")
        #expect(
            try daemon.run(first, ["add-generic-password", "-s", "svc", "-a", "alice"], input: "secret of one").status
                == 0)
        let own = try daemon.run(first, ["find-generic-password", "-s", "svc", "-w"])
        #expect(own.status == 0)
        #expect(own.stdout == "secret of one\n")
        let other = try daemon.run(second, ["find-generic-password", "-s", "svc", "-w"])
        #expect(other.status == 44, "another executable saw the item: \(other.stdout)")
        // The same service and account in the second app is another item, not a duplicate.
        #expect(
            try daemon.run(second, ["add-generic-password", "-s", "svc", "-a", "alice"], input: "secret of two").status
                == 0)
        #expect(try daemon.run(second, ["find-generic-password", "-s", "svc", "-w"]).stdout == "secret of two\n")
        #expect(try daemon.run(first, ["find-generic-password", "-s", "svc", "-w"]).stdout == "secret of one\n")
    }

    @Test func aGroupTheAppIsNotEntitledToIsErrSecMissingEntitlement() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let client = try RawDaemonClient(socket: daemon.socket)
        var item = NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("s"), "acct": .string("a")],
            secret: SecretBytes(utf8: "x"))
        item.accessGroup = "com.example.someone-else"
        #expect(client.exchange(.add(item)).map(status) == KeychainError.errSecMissingEntitlement.status)
        var query = ItemQuery(itemClass: .genericPassword, returns: .data)
        query.accessGroup = "keychainctl"
        #expect(client.exchange(.copyMatching(query)).map(status) == KeychainError.errSecMissingEntitlement.status)
    }

    @Test func racingClientsStartExactlyOneDaemon() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let racers = try (0..<12).map { _ in try daemon.shell.launch(["daemon", "start"]) }
        for racer in racers { try racer.stdin.fileHandleForWriting.close() }
        let outputs = racers.map { $0.finish() }
        #expect(outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.stderr))")
        let pids = Set(outputs.map(\.stdout))
        #expect(pids.count == 1, "\(pids)")
        let pid = try #require(try daemon.daemonPID())
        #expect(outputs.first?.stdout == "keychaind is running (pid \(pid))\n")
    }

    @Test func aStaleSocketIsReplaced() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let first = try #require(try daemon.daemonPID())
        // A daemon killed outright leaves its socket file behind.
        kill(first, SIGKILL)
        usleep(100_000)
        #expect(FileManager.default.fileExists(atPath: daemon.socket))
        #expect(try daemon.shell.run(["add-generic-password", "-s", "s", "-a", "a"], input: "x").status == 0)
        let second = try #require(try daemon.daemonPID())
        #expect(second != first)
    }

    @Test func keychainctlWorksThroughTheDaemonForAUserWhoIsNotRoot() throws {
        // keychainctl makes itself undumpable, and a daemon without CAP_SYS_PTRACE cannot read
        // /proc/PID/exe of an undumpable process, even its own user's: as root every test
        // passed while every real user was refused. A user of the machine, with their own home.
        let alice = try LocalUser.alice()
        let home = URL(fileURLWithPath: "/tmp/kc-alice-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        chown(home.path, alice.uid, alice.gid)
        chmod(home.path, 0o700)
        let shell = try CommandRunner()
        let environment = [
            "PATH=/usr/bin:/bin", "HOME=\(home.path)", "XDG_DATA_HOME=\(home.path)/data",
            "XDG_RUNTIME_DIR=\(home.path)/run", "KEYCHAIN_MODE=daemon",
        ]
        func keychainctl(_ arguments: [String], input: String = "") throws -> CommandRunner.Output {
            let line = alice.setpriv + ["/usr/bin/env", "-i"] + environment + [CommandRunner.binary.path] + arguments
            return try shell.script(
                "printf %s \(SystemDaemonHarness.quoted(input)) | "
                    + "\(line.map(SystemDaemonHarness.quoted).joined(separator: " "))"
            )
        }
        defer {
            if let line = try? keychainctl(["daemon", "status"]).stdout.split(separator: "\n").first(where: {
                $0.hasPrefix("pid: ")
            }), let pid = Int32(line.dropFirst(5)) {
                _ = try? keychainctl(["daemon", "stop"])
                kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(at: home)
            try? FileManager.default.removeItem(at: shell.home)
        }
        let added = try keychainctl(["add-generic-password", "-s", "mail", "-a", "me"], input: "secret")
        #expect(added.status == 0, "\(added.stderr)")
        let found = try keychainctl(["find-generic-password", "-s", "mail", "-w"])
        #expect(found.stdout == "secret\n", "\(found.stderr)")
        #expect(try keychainctl(["daemon", "status"]).stdout.contains("mode: per-user"))
    }

    @Test func aProcessOfAnotherUserIsRefused() throws {
        try #require(getuid() == 0, "needs root to run a client as another user (CI runs as root)")
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        // Let the other user reach the socket file: only the daemon's own check stands.
        chmod(daemon.runtime.path, 0o755)
        chmod(daemon.runtime.appendingPathComponent("keychain").path, 0o755)
        chmod(daemon.socket, 0o666)
        // The other user's process is told why, in place of the greeting, and cut off.
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print(data.hex())
            """
        let result = try daemon.shell.script(
            "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '\(script)' '\(daemon.socket)'")
        let bytes = try #require(
            Hex.decode(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result.stderr)")
        #expect(bytes.count > WireFrame.headerSize && WireFrame.bodyLength(bytes) == bytes.count - WireFrame.headerSize)
        guard
            case .failure(let refusal)? = try? ReplyCoder.decode(Array(bytes.dropFirst(WireFrame.headerSize)))
                as Result<KeychainReply, KeychainError>?
        else {
            Issue.record("the other user's process was not refused: \(result.stdout)")
            return
        }
        #expect(refusal.status == KeychainError.errSecInteractionNotAllowed.status)
        #expect(refusal.message.contains("serves uid \(getuid()) only"), "\(refusal.message)")
        // The daemon goes on serving its own user.
        #expect(try RawDaemonClient(socket: daemon.socket).exchange(.deviceStatus).map(status) == 0)
    }

    /// Each connection holds a pidfd of its client; it is closed with the connection, whether
    /// the client sent a request, sent nothing, or was cut off mid-request.
    @Test func connectionsLeaveNoDescriptorBehind() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let pid = try #require(try daemon.daemonPID())
        func descriptors() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        }
        #expect(try RawDaemonClient(socket: daemon.socket).exchange(.deviceStatus).map(status) == 0)
        // That connection's end reaches the daemon a moment later.
        usleep(300_000)
        let before = try descriptors()
        for round in 0..<30 {
            let client = try RawDaemonClient(socket: daemon.socket)
            switch round % 3 {
            case 0: #expect(client.exchange(.deviceStatus).map(status) == 0)
            case 1: break
            default: _ = client.send(WireFrame.header(100) + [WireFrame.version])
            }
        }
        // The daemon closes its side once it sees each end.
        let deadline = Date().addingTimeInterval(5)
        while try descriptors() > before, Date() < deadline { usleep(20_000) }
        // Fewer is no leak: the first connection may not have been closed yet when counted.
        let after = try descriptors()
        #expect(after <= before, "\(after) descriptors after 30 connections, \(before) before")
    }

    @Test func malformedOversizedAndTruncatedMessagesCloseOnlyTheirConnection() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let wellBehaved = try RawDaemonClient(socket: daemon.socket)
        #expect(wellBehaved.exchange(.deviceStatus).map(status) == 0)
        // An unknown request, a wrong version, and bytes that are no frame at all.
        for body: [UInt8] in [[WireFrame.version, 250], [9, 5], [WireFrame.version, 2, 0xff, 0xff]] {
            let client = try RawDaemonClient(socket: daemon.socket)
            client.send(WireFrame.header(body.count) + body)
            #expect(client.replyStatus() == KeychainError.errSecDecode.status)
            #expect(client.isClosedByDaemon)
        }
        // A length over the limit: refused before its bytes come.
        let oversized = try RawDaemonClient(socket: daemon.socket)
        oversized.send(WireFrame.header(WireFrame.maximumRequest + 1))
        #expect(oversized.replyStatus() == KeychainError.errSecDecode.status)
        #expect(oversized.isClosedByDaemon)
        // A frame cut short by the end of the stream.
        let truncated = try RawDaemonClient(socket: daemon.socket)
        truncated.send(WireFrame.header(100) + [WireFrame.version, 5])
        truncated.finishSending()
        #expect(truncated.replyStatus() == KeychainError.errSecDecode.status)
        // A client that sends half a header and stalls holds up nobody.
        let stalled = try RawDaemonClient(socket: daemon.socket)
        stalled.send([0, 0])
        #expect(wellBehaved.exchange(.deviceStatus).map(status) == 0)
        _ = stalled
    }

    @Test func aSecretNeedsAnEvaluationTheDaemonPerformedOnThatConnection() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let client = try RawDaemonClient(socket: daemon.socket)
        let control = try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .devicePasscode)
        var item = NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("guarded"), "acct": .string("a")],
            secret: SecretBytes(utf8: "GUARDED"))
        item.accessControl = control
        #expect(client.exchange(.add(item)).map(status) == 0)
        var query = ItemQuery(itemClass: .genericPassword, attributes: ["svce": .string("guarded")], returns: .data)
        // No context, and a context that never authenticated.
        #expect(client.exchange(.copyMatching(query)).map(status) == KeychainError.errSecInteractionNotAllowed.status)
        let context = AuthenticationContextID.random()
        query.authenticationContext = context
        #expect(client.exchange(.copyMatching(query)).map(status) == KeychainError.errSecInteractionNotAllowed.status)
        // An app does not hand keychaind a passcode: keychaind asks for it itself.
        #expect(
            client.exchange(.verifyPasscode(SecretBytes(utf8: "1234"), context: context)).map(status)
                == KeychainError.errSecParam.status)
        #expect(client.exchange(.copyMatching(query)).map(status) == KeychainError.errSecInteractionNotAllowed.status)
        // keychaind draws the sheet on a terminal of this user and reads the passcode there: this
        // connection may read…
        let terminal = try PseudoTerminal(URL(fileURLWithPath: "/bin/sleep"), ["60"], environment: [:])
        client.send(
            .authenticateOwner(
                OwnerAuthentication(
                    factors: .passcode, reason: "To read the guarded item", cancelTitle: "Cancel", fallbackTitle: nil,
                    context: context, terminal: terminal.device)))
        #expect(terminal.expect("Passcode:"))
        #expect(terminal.sheetText.contains("To read the guarded item"), "\(terminal.screen)")
        terminal.type("1234\r")
        guard case .success(.biometry)? = client.reply() else {
            Issue.record("the passcode typed on keychaind's sheet did not authenticate")
            return
        }
        guard case .success(.items(let items))? = client.exchange(.copyMatching(query)) else {
            Issue.record("the authenticated context did not read the item")
            return
        }
        #expect(items.first?.secret?.copyData() == Data("GUARDED".utf8))
        // …another connection naming the same context, or replaying the same request, may not.
        let other = try RawDaemonClient(socket: daemon.socket)
        #expect(other.exchange(.copyMatching(query)).map(status) == KeychainError.errSecInteractionNotAllowed.status)
        // Once the context is invalidated, not even its own connection.
        #expect(client.exchange(.invalidateContext(context)).map(status) == 0)
        #expect(client.exchange(.copyMatching(query)).map(status) == KeychainError.errSecInteractionNotAllowed.status)
    }

    /// Lookups are answered on the socket's thread and writes on the pool: requests sent
    /// together without waiting for replies are still answered one by one, in order (a read of
    /// an item sent after its add finds it), while another connection's passcode check runs.
    @Test func requestsSentTogetherAreAnsweredInOrder() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let checking = try RawDaemonClient(socket: daemon.socket)
        checking.send(.unlock(passcode: SecretBytes(utf8: "1234")))
        let client = try RawDaemonClient(socket: daemon.socket)
        let rounds = 25
        for round in 0..<rounds {
            client.send(
                .add(
                    NewItem(
                        itemClass: .genericPassword,
                        attributes: ["svce": .string("piped"), "acct": .string("\(round)")],
                        secret: SecretBytes(utf8: "secret-\(round)"))))
            client.send(
                .copyMatching(
                    ItemQuery(
                        itemClass: .genericPassword,
                        attributes: ["svce": .string("piped"), "acct": .string("\(round)")], returns: .data)))
        }
        for round in 0..<rounds {
            #expect(client.reply().map(status) == 0, "add \(round)")
            guard case .success(.items(let items))? = client.reply() else {
                Issue.record("the read sent after add \(round) did not find its item")
                continue
            }
            #expect(items.first?.secret?.copyData() == Data("secret-\(round)".utf8))
        }
        #expect(checking.reply().map(status) == 0)
    }

    @Test func aClientThatStopsInsideAMessageIsDisconnectedAndNoOneWaits() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let stalled = try RawDaemonClient(socket: daemon.socket)
        #expect(stalled.send(WireFrame.header(20) + [WireFrame.version]))
        // Between messages a connection may stay as long as its app likes.
        let between = try RawDaemonClient(socket: daemon.socket)
        #expect(between.exchange(.deviceStatus).map(status) == 0)
        // Everyone else is served meanwhile.
        #expect(try RawDaemonClient(socket: daemon.socket).exchange(.deviceStatus).map(status) == 0)
        usleep(500_000)
        #expect(!stalled.isClosedAlready, "closed before its time")
        sleep(11)
        #expect(stalled.isClosedAlready, "a message begun 11 s ago and never finished still holds its connection")
        #expect(between.exchange(.deviceStatus).map(status) == 0)
    }

    @Test func sigtermStopsTheDaemonCleanlyAndNothingIsLost() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(
            try daemon.shell.run(["add-generic-password", "-s", "kept", "-a", "a"], input: "still here").status == 0)
        let pid = try #require(try daemon.daemonPID())
        let stopped = try daemon.shell.run(["daemon", "stop"])
        #expect(stopped.stdout == "keychaind (pid \(pid)) stopped\n")
        let log = try String(
            contentsOf: daemon.runtime.appendingPathComponent("keychain/keychaind.log"), encoding: .utf8)
        #expect(log.contains("keychaind stopped"))
        #expect(try daemon.shell.run(["daemon", "status"]).stdout.hasPrefix("keychaind is not running"))
        // The next request starts a new daemon, which has the item.
        #expect(try daemon.shell.run(["find-generic-password", "-s", "kept", "-w"]).stdout == "still here\n")
        #expect(try daemon.daemonPID() != pid)
    }

    @Test func theDaemonLocksAfterItsIdleTime() throws {
        let daemon = try DaemonHarness(idleLock: 1)
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: unlocked"))
        sleep(2)
        let status = try daemon.shell.run(["status"]).stdout
        #expect(status.contains("state: locked"), "\(status)")
        #expect(try daemon.shell.run(["daemon", "status"]).stdout.contains("locks after: 1 s without a request"))
        // An idle lock ends the owner session too.
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        sleep(2)
        #expect(try daemon.shell.run(["unlock"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["apps", "list"]).stderr.contains("OSStatus -34018"))
    }

    @Test func statusShowsPidUptimeModeClientsAndLockState() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["daemon", "status"]).stdout.hasPrefix("keychaind is not running"))
        _ = try daemon.shell.run(["daemon", "start"])
        let held = try RawDaemonClient(socket: daemon.socket)
        _ = held.exchange(.deviceStatus)
        let status = try daemon.shell.run(["daemon", "status"]).stdout
        let pid = try #require(try daemon.daemonPID())
        for line in [
            "keychaind: running", "pid: \(pid)", "mode: per-user", "connected clients: 2",
            "keychain: unlocked (no passcode is set)",
        ] {
            #expect(status.contains(line), "\(line) missing from:\n\(status)")
        }
        #expect(status.contains("uptime: "))
    }

    @Test func theAttemptCounterSurvivesDeletingItsFileAndARestart() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        for wrong in 1...5 {
            #expect(try daemon.shell.run(["unlock"], input: "000\(wrong)\n").status == 1)
        }
        #expect(try daemon.shell.run(["status"]).stdout.contains("failed passcode attempts: 5"))
        // Deleting the counter while the daemon runs resets nothing: it is not believed, and
        // the keychain counts the worst case instead.
        try FileManager.default.removeItem(at: daemon.shell.keychainDirectory.appendingPathComponent("attempts"))
        let afterDeleting = try daemon.shell.run(["status"]).stdout
        #expect(!afterDeleting.contains("failed passcode attempts: 0"), "\(afterDeleting)")
        #expect(!afterDeleting.contains("next passcode attempt allowed: now"), "\(afterDeleting)")
        _ = try daemon.shell.run(["daemon", "stop"])
        let afterRestart = try daemon.shell.run(["status"]).stdout
        #expect(!afterRestart.contains("failed passcode attempts: 0"), "\(afterRestart)")
        #expect(!afterRestart.contains("next passcode attempt allowed: now"), "\(afterRestart)")
        // The right passcode still has to wait.
        #expect(try daemon.shell.run(["unlock"], input: "1234\n").status == 1)
    }

    @Test func killingTheDaemonDuringSixteenWritersLosesNoAcknowledgedWrite() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let killed = try #require(try daemon.daemonPID())
        let log = daemon.shell.home.appendingPathComponent("acknowledged")
        try FileManager.default.createDirectory(at: log, withIntermediateDirectories: true)
        // 16 writers, each adding items and noting every add the keychain acknowledged; the
        // daemon is killed outright while they run, once more than 16 adds were acknowledged (a
        // fixed wait acknowledged none on a loaded machine), and the next request starts a new one.
        let writers = """
            for w in $(seq 1 16); do
              ( for i in $(seq 1 12); do
                  printf 'secret-%s-%s' $w $i | "$KEYCHAINCTL" add-generic-password -s writer$w -a item$i 2>/dev/null \
                  && echo $i >> '\(log.path)'/$w
                done ) &
            done
            for t in $(seq 1 600); do
              [ "$(cat '\(log.path)'/* 2>/dev/null | wc -l)" -gt 16 ] && break
              sleep 0.05
            done
            kill -KILL \(killed)
            wait
            """
        let run = try daemon.shell.script(writers)
        #expect(run.status == 0, "\(run.stderr)")
        var acknowledged = 0
        for writer in 1...16 {
            let noted = (try? String(contentsOf: log.appendingPathComponent(String(writer)), encoding: .utf8)) ?? ""
            for item in noted.split(separator: "\n") {
                acknowledged += 1
                let found = try daemon.shell.run([
                    "find-generic-password", "-s", "writer\(writer)", "-a", "item\(item)", "-w",
                ])
                #expect(
                    found.stdout == "secret-\(writer)-\(item)\n",
                    "acknowledged add writer\(writer)/item\(item) was lost")
            }
        }
        #expect(acknowledged > 16, "the writers barely ran: \(acknowledged) acknowledged adds")
        #expect(try daemon.daemonPID() != killed, "the daemon was not killed during the writes")
    }

    /// Sets the passcode 1234 and adds "app-secret" as the app `some-app`, not keychainctl.
    static func addAppSecret(_ daemon: DaemonHarness) throws {
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let app = try daemon.copyOfKeychainctl(named: "some-app")
        let added = try daemon.run(app, ["add-generic-password", "-s", "app-secret", "-a", "a"], input: "APP SECRET")
        #expect(added.status == 0, "\(added.stderr)")
    }

    /// Issue 53: an app is known by its path, so items added with one copy of keychainctl were
    /// "not found" by another, and nothing said why. A search that finds nothing names a copy of
    /// the same program (same name, same bytes) whose items match; a program of other bytes is
    /// told nothing.
    @Test func aCopyOfTheSameProgramWithMatchingItemsIsNamed() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        var copies: [URL] = []
        for directory in ["one", "two", "three"] {
            let folder = daemon.shell.home.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = folder.appendingPathComponent("keychainctl")
            try FileManager.default.copyItem(at: CommandRunner.binary, to: copy)
            copies.append(copy)
        }
        // The third has other bytes: one more at its end (an ELF file runs the same).
        let other = try FileHandle(forWritingTo: copies[2])
        try other.seekToEnd()
        try other.write(contentsOf: Data([0]))
        try other.close()
        let added = try daemon.run(copies[0], ["add-generic-password", "-s", "mail", "-a", "me"], input: "s")
        #expect(added.status == 0, "\(added.stderr)")
        let path = "PATH='\(copies[0].deletingLastPathComponent().path)':\"$PATH\""
        let second = try daemon.shell.script("\(path) '\(copies[1].path)' find-generic-password -s mail -w")
        #expect(second.status == 44, "\(second.stdout)")
        #expect(
            second.stderr.contains("a copy of this program at \(copies[0].path) has matching items"), "\(second.stderr)"
        )
        let third = try daemon.shell.script("\(path) '\(copies[2].path)' find-generic-password -s mail -w")
        #expect(third.status == 44 && !third.stderr.contains("copy of this program"), "\(third.stderr)")
        // Nothing matching anywhere: no hint.
        let none = try daemon.shell.script("\(path) '\(copies[1].path)' find-generic-password -s other -w")
        #expect(none.status == 44 && !none.stderr.contains("copy of this program"), "\(none.stderr)")
    }

    @Test func anOwnerSessionSeesEveryGroupInItsLoginSessionUntilLogout() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        try Self.addAppSecret(daemon)
        // keychainctl is an app like any other: the item is not there for it…
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).status == 44)
        #expect(try daemon.shell.run(["owner", "login"], input: "0000\n").status == 1)
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).status == 44)
        // …until the owner gives the passcode: then, in this login session, it is.
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).stdout == "APP SECRET\n")
        #expect(try daemon.shell.run(["dump-keychain"]).stdout.contains("app-secret"))
        // Another login session (setsid) has no owner session.
        #expect(
            try daemon.shell.script("setsid -w \"$KEYCHAINCTL\" find-generic-password -s app-secret -w").status == 44)
        // Nor does another program in this one.
        #expect(
            try daemon.run(
                try daemon.copyOfKeychainctl(named: "other-app"), ["find-generic-password", "-s", "app-secret", "-w"]
            ).status == 44)
        #expect(try daemon.shell.run(["owner", "logout"]).status == 0)
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).status == 44)
        // Lock ends every owner session.
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["lock"]).status == 0)
        #expect(try daemon.shell.run(["unlock"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).status == 44)
        // Issue 53: `owner login` on a locked keychain took the passcode and left it locked. The
        // passcode that proves the owner unlocks too.
        #expect(try daemon.shell.run(["lock"]).status == 0)
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        let status = try daemon.shell.run(["status"]).stdout
        #expect(status.contains("state: unlocked\n"), "\(status)")
        #expect(try daemon.shell.run(["find-generic-password", "-s", "app-secret", "-w"]).stdout == "APP SECRET\n")
    }

    /// A session id is its leader's pid, and pids come back: once the owner's login session has
    /// ended, a process that gets the leader's pid (here at once, through `ns_last_pid`; an
    /// attacker forks until it has it) and starts a session of its own has the same id, and must
    /// not inherit the owner session.
    @Test func anOwnerSessionIsNotInheritedByALaterSessionWithTheSameId() throws {
        try #require(getuid() == 0, "needs root to choose the next pid (CI runs as root)")
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        try Self.addAppSecret(daemon)
        let leader = """
            import os, subprocess
            assert os.getsid(0) == os.getpid()
            keychainctl = os.environ["KEYCHAINCTL"]
            subprocess.run([keychainctl, "owner", "login"], input=b"1234\\n", check=True, capture_output=True)
            found = subprocess.run([keychainctl, "find-generic-password", "-s", "app-secret", "-w"], \
            capture_output=True)
            print(os.getpid(), found.returncode, flush=True)
            """
        let leading = try daemon.shell.script("setsid -w /usr/bin/python3 -c '\(leader)'")
        let owner = leading.stdout.split(separator: " ")
        #expect(owner.last == "0\n", "the owner session did not open: \(leading.stdout) \(leading.stderr)")
        let session = try #require(owner.first.flatMap { Int32($0) })
        let reuse = """
            import os, subprocess, sys
            session = int(sys.argv[1])
            for attempt in range(100):
                with open("/proc/sys/kernel/ns_last_pid", "w") as last: last.write(str(session - 1))
                child = os.fork()
                if child == 0:
                    if os.getpid() != session: os._exit(3)
                    os.setsid()
                    found = subprocess.run([os.environ["KEYCHAINCTL"], "find-generic-password", "-s", "app-secret", \
                    "-w"], capture_output=True)
                    print("session", os.getsid(0), "status", found.returncode, flush=True)
                    os._exit(0)
                _, status = os.waitpid(child, 0)
                if os.WEXITSTATUS(status) == 0: break
            """
        let later = try daemon.shell.script("/usr/bin/python3 -c '\(reuse)' \(session)").stdout
        #expect(later == "session \(session) status 44\n", "a later session with the owner's session id: \(later)")
    }

    @Test func sharedGroupsAreGrantedAndRevokedByTheOwnerOnly() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let reader = try daemon.copyOfKeychainctl(named: "reader")
        // The writer is this test process, through a raw client.
        let writer = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        // Granting needs an owner session.
        let refused = try daemon.shell.run(["apps", "grant", reader.path, "com.example.shared"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("OSStatus -34018"))
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        #expect(
            try daemon.shell.run(["apps", "grant", reader.path, "/usr/bin/another-app"]).status == 1,
            "an app's own group is not shared")
        #expect(try daemon.shell.run(["apps", "grant", reader.path, "com.example.shared"]).status == 0)
        #expect(try daemon.shell.run(["apps", "grant", writer, "com.example.shared"]).status == 0)
        #expect(try daemon.shell.run(["apps", "list"]).stdout.contains("\(reader.path): com.example.shared"))
        // The writer puts an item in the shared group; the reader finds it there.
        let client = try RawDaemonClient(socket: daemon.socket)
        var item = NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("shared"), "acct": .string("a")],
            secret: SecretBytes(utf8: "SHARED"))
        item.accessGroup = "com.example.shared"
        #expect(client.exchange(.add(item)).map(status) == 0)
        #expect(try daemon.run(reader, ["find-generic-password", "-s", "shared", "-w"]).stdout == "SHARED\n")
        // Revoked: gone for the reader at once, and writing there is errSecMissingEntitlement.
        #expect(try daemon.shell.run(["apps", "revoke", reader.path, "com.example.shared"]).status == 0)
        #expect(try daemon.run(reader, ["find-generic-password", "-s", "shared", "-w"]).status == 44)
        #expect(try daemon.shell.run(["apps", "revoke", writer, "com.example.shared"]).status == 0)
        item.attributes["acct"] = .string("b")
        #expect(client.exchange(.add(item)).map(status) == KeychainError.errSecMissingEntitlement.status)
    }

    @Test func onlyTheOwnersChannelTouchesTheSimulatedSensor() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        for (arguments, input) in [
            (["passcode", "set"], "1234\n"), (["biometry", "simulate", "on"], "1234\n"),
            (["biometry", "enroll", "--finger", "thumb"], "1234\n"),
        ] {
            #expect(try daemon.shell.run(arguments, input: input).status == 0)
        }
        let touch = try daemon.shell.run(["biometry", "touch", "--matching"])
        #expect(touch.status == 1)
        #expect(touch.stderr.contains("OSStatus -34018"), "\(touch.stderr)")
        // Nor can the simulated sensor open an owner session: its touches would come from one.
        let byTouch = try daemon.shell.run(["owner", "login", "--fingerprint"])
        #expect(byTouch.status == 1)
        #expect(byTouch.stderr.contains("the simulated sensor is touched from an owner session"), "\(byTouch.stderr)")
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)
        // In an owner session the touch is taken, and answers only a waiting prompt.
        #expect(try daemon.shell.run(["biometry", "touch", "--matching"]).stderr.contains("OSStatus -909"))
    }

    @Test func anEvaluationThroughTheDaemonReadsAProtectedItemOnATerminal() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        for (arguments, input) in [
            (["passcode", "set"], "1234\n"), (["biometry", "simulate", "on"], "1234\n"),
            (["biometry", "enroll", "--finger", "thumb"], "1234\n"), (["owner", "login"], "1234\n"),
        ] {
            #expect(try daemon.shell.run(arguments, input: input).status == 0)
        }
        #expect(
            try daemon.shell.addPassword(
                "guarded", account: "me", ["--access-control", "userPresence"], secret: "TOUCH TO READ"))
        // The sheet on the terminal; the daemon waits for the touch and keeps the grant.
        let find = try PseudoTerminal(
            CommandRunner.binary, ["find-generic-password", "-s", "guarded", "-w"], environment: daemon.environment)
        #expect(find.expect("Touch the fingerprint sensor."), "\(find.screen)")
        #expect(try daemon.shell.run(["biometry", "touch", "--matching"]).status == 0)
        #expect(find.expect("TOUCH TO READ"))
        #expect(find.wait() == 0)
        // A passcode typed into the sheet goes to the daemon, which checks it.
        let byPasscode = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "owner", "--reason", "To add a new chore"],
            environment: daemon.environment)
        #expect(byPasscode.expect("Touch the fingerprint sensor."))
        byPasscode.type("\r")
        #expect(byPasscode.expect("Passcode: "))
        byPasscode.type("1234\r")
        #expect(byPasscode.wait() == 0)
    }

    private func status(_ result: Result<KeychainReply, KeychainError>) -> Int32 {
        switch result {
        case .success: 0
        case .failure(let error): error.status
        }
    }
}

/// keychaind under systemd: the user units keychainctl installs, and the socket systemd hands
/// over (`LISTEN_FDS`).
@Suite struct DaemonUnderSystemdTests {
    @Test func installWritesUserUnitsForSocketActivation() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let config = daemon.shell.home.appendingPathComponent("config")
        let result = try daemon.shell.script("XDG_CONFIG_HOME='\(config.path)' \"$KEYCHAINCTL\" daemon install --user")
        #expect(result.status == 0, "\(result.stderr)")
        let units = config.appendingPathComponent("systemd/user")
        let socket = try String(contentsOf: units.appendingPathComponent("keychaind.socket"), encoding: .utf8)
        let service = try String(contentsOf: units.appendingPathComponent("keychaind.service"), encoding: .utf8)
        #expect(socket.contains("ListenStream=%t/keychain/socket"))
        #expect(socket.contains("SocketMode=0600"))
        let keychaind = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("keychaind")
            .resolvingSymlinksInPath().path
        #expect(service.contains("ExecStart=\(keychaind)\n"))
        #expect(try daemon.shell.run(["daemon", "install"]).status == 1, "--user is required")
        let sealed = try daemon.shell.script(
            "XDG_CONFIG_HOME='\(config.path)' \"$KEYCHAINCTL\" daemon install --user --tpm")
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let withTPM = try String(contentsOf: units.appendingPathComponent("keychaind.service"), encoding: .utf8)
        #expect(withTPM.contains("ExecStart=\(keychaind) --tpm auto\n"), "\(withTPM)")
    }

    /// The per-user daemon with a TPM (`daemon start --tpm`): the device secret is sealed and in
    /// no file, an older copy of the files is refused, and without the TPM the keychain does
    /// not open.
    @Test func thePerUserDaemonCanSealTheDeviceSecretToATPM() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let shell = daemon.shell
        #expect(try shell.run(["daemon", "start", "--tpm", tpm.tcti]).status == 0)
        #expect(try shell.addPassword("mail", account: "me", secret: "old"))
        let keychain = shell.keychainDirectory
        #expect(!FileManager.default.fileExists(atPath: keychain.appendingPathComponent("device-secret").path))
        #expect(try shell.run(["status"]).stdout.contains("device secret: sealed to the TPM (\(tpm.tcti))"))

        #expect(try shell.run(["daemon", "stop"]).status == 0)
        let old = shell.home.appendingPathComponent("older-copy").path
        #expect(system("cp -a '\(keychain.path)' '\(old)'") == 0)
        #expect(try shell.run(["daemon", "start", "--tpm", tpm.tcti]).status == 0)
        #expect(try shell.run(["delete-generic-password", "-s", "mail"]).status == 0)
        #expect(try shell.run(["daemon", "stop"]).status == 0)
        #expect(system("rm -rf '\(keychain.path)' && cp -a '\(old)' '\(keychain.path)'") == 0)
        // keychaind starts, and says the keychain it serves does not open.
        let started = try shell.run(["daemon", "start", "--tpm", tpm.tcti])
        #expect(started.status != 0 && started.stderr.contains("older copy"), "\(started.stderr)")
        let rolledBack = try shell.run(["find-generic-password", "-s", "mail", "-w"])
        #expect(rolledBack.status != 0 && rolledBack.stderr.contains("older copy"), "\(rolledBack.stderr)")

        // Stopped all the same, and started without the TPM: the keychain does not open.
        #expect(try shell.run(["daemon", "stop"]).status == 0)
        let withoutTPM = try shell.run(["find-generic-password", "-s", "mail", "-w"])
        #expect(withoutTPM.stderr.contains("is sealed to a TPM"), "\(withoutTPM.stderr)")
    }

    @Test func aSocketHandedOverBySystemdIsServed() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        let directory = daemon.runtime.appendingPathComponent("keychain")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(daemon.runtime.path, 0o700)
        let keychaind = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("keychaind").path
        guard let activate = ChildSpawn.find("systemd-socket-activate") else {
            Issue.record("systemd-socket-activate is not installed (Debian's systemd package)")
            return
        }
        // systemd-socket-activate hands its child none of its environment but what -E names:
        // without these, the daemon served the default runtime directory and the user's own
        // keychain (and failed when a daemon already ran there).
        let passed = ["HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"].filter {
            daemon.environment[$0] != nil
        }.flatMap { ["-E", $0] }
        let activator = try ChildSpawn.spawn(
            activate, ["-l", daemon.socket] + passed + [keychaind], environment: daemon.environment,
            stdio: (nil, nil, nil))
        defer {
            kill(activator, SIGKILL)
            var status: Int32 = 0
            waitpid(activator, &status, 0)
        }
        var client: RawDaemonClient?
        for _ in 0..<100 where client == nil {
            client = try? RawDaemonClient(socket: daemon.socket)
            if client == nil { usleep(20_000) }
        }
        let connected = try #require(client)
        guard case .success(.daemon(let status))? = connected.exchange(.daemonStatus) else {
            Issue.record("the activated daemon did not answer")
            return
        }
        // systemd-socket-activate runs keychaind in its own process (exec): the daemon is it.
        #expect(status.pid == activator)
    }
}
