import Foundation
import KeychainProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A request is answered for the process that sent it, never for the connection it came on:
/// each attack below takes a connection identified as one app (a copy of Python at its own path,
/// the "victim", whose item holds `VICTIM`) and writes on it from another program. Each got the
/// victim's secret from the daemon before requests were bound to their writer.
@Suite(.serialized) struct RequestProvenanceTests {
    /// The daemon of a keychain of the test's own, the victim app and its item.
    private final class Scene {
        let daemon: DaemonHarness
        let victim: URL
        let folder: URL
        private var children: [pid_t] = []

        init() throws {
            daemon = try DaemonHarness()
            _ = try daemon.shell.run(["daemon", "start"])
            folder = daemon.shell.home.appendingPathComponent("attack")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            victim = folder.appendingPathComponent("victim-python")
            try FileManager.default.copyItem(atPath: "/usr/bin/python3.11", toPath: victim.path)
        }

        /// A Python program that speaks the wire format: `frame`, `read_frame`, `greeting` (at
        /// most two seconds: a daemon that sends none is not waited for), and `report`, which
        /// prints a reply as `reply HEX`. `ADD` adds the victim's item, `READ` reads its secret.
        func script(_ name: String, _ body: String) throws -> String {
            let add = NewItem(
                itemClass: .genericPassword, attributes: ["svce": .string("victim"), "acct": .string("a")],
                secret: SecretBytes(utf8: "VICTIM"))
            let read = ItemQuery(itemClass: .genericPassword, attributes: ["svce": .string("victim")], returns: .data)
            let prelude = """
                import os, select, socket, sys, time
                SOCK = \(pythonString(daemon.socket))
                VICTIM = \(pythonString(victim.path))
                ADD = bytes.fromhex("\(Hex.encode(RequestCoder.encode(.add(add))))")
                READ = bytes.fromhex("\(Hex.encode(RequestCoder.encode(.copyMatching(read))))")
                def frame(body): return len(body).to_bytes(4, "big") + body
                def read_exact(s, n):
                    data = b""
                    while len(data) < n:
                        chunk = s.recv(n - len(data))
                        if not chunk: return None
                        data += chunk
                    return data
                def read_frame(s):
                    header = read_exact(s, 4)
                    return None if header is None else read_exact(s, int.from_bytes(header, "big"))
                def greeting(s):
                    ready, _, _ = select.select([s], [], [], 2.0)
                    return read_frame(s) if ready else None
                def report(body): print("reply " + ("none" if body is None else body.hex()), flush=True)

                """
            let file = folder.appendingPathComponent(name)
            try (prelude + body).write(to: file, atomically: true, encoding: .utf8)
            return file.path
        }

        /// Starts `executable script arguments…`: its pid, its output to read lines from, and its
        /// input to write to. Ended by its pid when the scene ends.
        func start(
            _ executable: String, _ arguments: [String]
        ) throws -> (pid: pid_t, output: FileHandle, input: FileHandle) {
            let (outRead, outWrite) = try ChildSpawn.pipe()
            let (inRead, inWrite) = try ChildSpawn.pipe()
            let pid = try ChildSpawn.spawn(
                executable, arguments, environment: daemon.environment, stdio: (inRead, outWrite, outWrite))
            close(outWrite)
            close(inRead)
            children.append(pid)
            return (
                pid, FileHandle(fileDescriptor: outRead, closeOnDealloc: true),
                FileHandle(fileDescriptor: inWrite, closeOnDealloc: true)
            )
        }

        /// The victim's item, added by the victim app on a connection of its own.
        func addVictimItem() throws {
            let path = try script("add.py", """
                s = socket.socket(socket.AF_UNIX); s.connect(SOCK); greeting(s)
                s.sendall(frame(ADD)); report(read_frame(s))
                """)
            let added = try daemon.run(victim, [path])
            #expect(added.stdout.hasPrefix("reply "), "\(added.stderr)")
            #expect(reply(added.stdout).map(status) == 0)
        }

        func end() {
            for pid in children {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
            daemon.cleanUp()
        }
    }

    /// A child of the victim execs another program, which writes on the socket it inherited.
    @Test func aDescriptorInheritedByAnotherProgramIsRefused() throws {
        let scene = try Scene()
        defer { scene.end() }
        try scene.addVictimItem()
        let thief = try scene.script("inheritor.py", """
            s = socket.socket(fileno=int(sys.argv[1])); s.sendall(frame(READ)); report(read_frame(s))
            """)
        let victim = try scene.script("victim.py", """
            s = socket.socket(socket.AF_UNIX); s.connect(SOCK); greeting(s)
            os.set_inheritable(s.fileno(), True)
            child = os.fork()
            if child == 0: os.execv("/usr/bin/python3", ["/usr/bin/python3", \(pythonString(thief)), str(s.fileno())])
            os.waitpid(child, 0)
            """)
        let result = try scene.daemon.run(scene.victim, [victim])
        expectRefusedAsForeign(result.stdout, result.stderr)
        expectAudited(scene)
    }

    /// The victim hands its connection to another program (`SCM_RIGHTS`), which writes on it.
    @Test func aDescriptorHandedOverIsRefused() throws {
        let scene = try Scene()
        defer { scene.end() }
        try scene.addVictimItem()
        let receiver = try scene.script("receiver.py", """
            channel = socket.socket(fileno=int(sys.argv[1]))
            _, descriptors, _, _ = socket.recv_fds(channel, 1, 1)
            s = socket.socket(fileno=descriptors[0]); s.sendall(frame(READ)); report(read_frame(s))
            """)
        let victim = try scene.script("giver.py", """
            import subprocess
            s = socket.socket(socket.AF_UNIX); s.connect(SOCK); greeting(s)
            mine, theirs = socket.socketpair()
            other = subprocess.Popen(["/usr/bin/python3", \(pythonString(receiver)), str(theirs.fileno())], \
            pass_fds=[theirs.fileno()])
            socket.send_fds(mine, [b"x"], [s.fileno()])
            other.wait()
            """)
        let result = try scene.daemon.run(scene.victim, [victim])
        expectRefusedAsForeign(result.stdout, result.stderr)
    }

    /// Another program of the user takes the victim's connected socket out of the running
    /// victim with `pidfd_getfd` (which needs only the right to trace it) and writes on it.
    @Test func aDescriptorTakenWithPidfdGetfdIsRefused() throws {
        try #require(getuid() == 0, "needs the right to trace another process (CI runs as root)")
        let scene = try Scene()
        defer { scene.end() }
        try scene.addVictimItem()
        let holder = try scene.script("holder.py", """
            s = socket.socket(socket.AF_UNIX); s.connect(SOCK); greeting(s)
            print("holding", s.fileno(), flush=True); time.sleep(60)
            """)
        let victim = try scene.start(scene.victim.path, [holder])
        let holding = try #require(try ChildSpawn.readLine(victim.output)).split(separator: " ")
        let descriptor = try #require(holding.last.flatMap { Int32($0) })
        let thief = try scene.script("thief.py", """
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            pidfd = os.pidfd_open(int(sys.argv[1]))
            stolen = libc.syscall(438, pidfd, int(sys.argv[2]), 0)
            if stolen < 0: sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
            s = socket.socket(fileno=stolen); s.sendall(frame(READ)); report(read_frame(s))
            """)
        let result = try scene.daemon.run(
            URL(fileURLWithPath: "/usr/bin/python3"), [thief, String(victim.pid), String(descriptor)])
        expectRefusedAsForeign(result.stdout, result.stderr)
        expectAudited(scene)
    }

    /// A program connects, forks a child that keeps the socket, and execs the victim app; the
    /// daemon, paused meanwhile, sees the victim when it looks. The child then writes.
    @Test func connectingThenExecutingTheVictimGivesTheChildNothing() throws {
        let result = try connectThenExec(writingFirst: false)
        expectRefusedAsForeign(result, "")
    }

    /// The same, but the program writes its request before it execs the victim, so that the
    /// request is already waiting when the daemon identifies the victim; its child reads the
    /// reply.
    @Test func aRequestWrittenBeforeTheGreetingIsRefused() throws {
        let result = try connectThenExec(writingFirst: true)
        let reply = reply(result)
        guard case .failure(let error)? = reply else {
            Issue.record("a request written before the exec was answered: \(result)")
            return
        }
        #expect(error.status == KeychainError.errSecInteractionNotAllowed.status)
        #expect(error.message.contains("before keychaind's greeting"), "\(error.message)")
    }

    /// Runs the connect-fork-exec attack with the daemon stopped (SIGSTOP) from before the
    /// connection until the victim runs: what the child printed.
    private func connectThenExec(writingFirst: Bool) throws -> String {
        let scene = try Scene()
        defer { scene.end() }
        try scene.addVictimItem()
        let attacker = try scene.script("exec.py", """
            s = socket.socket(socket.AF_UNIX); s.connect(SOCK)
            if \(writingFirst ? "True" : "False"): s.sendall(frame(READ))
            os.set_inheritable(s.fileno(), True)
            parent = os.getpid()
            if os.fork() == 0:
                while os.readlink(f"/proc/{parent}/exe") != VICTIM: time.sleep(0.01)
                print("executed", flush=True)
                sys.stdin.readline()
                if \(writingFirst ? "True" : "False"):
                    report(read_frame(s))
                else:
                    greeting(s); s.sendall(frame(READ)); report(read_frame(s))
                os._exit(0)
            os.execv(VICTIM, [VICTIM, "-c", "import time; time.sleep(60)"])
            """)
        let daemonPID = try #require(try scene.daemon.daemonPID())
        kill(daemonPID, SIGSTOP)
        let started = try scene.start("/usr/bin/python3", [attacker])
        let executed = try ChildSpawn.readLine(started.output)
        kill(daemonPID, SIGCONT)
        #expect(executed == "executed")
        started.input.write(Data("go\n".utf8))
        return try ChildSpawn.readLine(started.output) ?? ""
    }

    private func expectRefusedAsForeign(
        _ stdout: String, _ stderr: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .failure(let error)? = reply(stdout) else {
            Issue.record("another process's request was answered: \(stdout) \(stderr)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.status == KeychainError.errSecInteractionNotAllowed.status, sourceLocation: sourceLocation)
        #expect(
            error.message.contains("written by another process"), "\(error.message)", sourceLocation: sourceLocation)
    }

    private func expectAudited(_ scene: Scene, sourceLocation: SourceLocation = #_sourceLocation) {
        let log =
            (try? String(
                contentsOf: scene.daemon.runtime.appendingPathComponent("keychain/keychaind.log"), encoding: .utf8))
            ?? ""
        #expect(
            log.contains("request refused: written by another process than the one identified"),
            sourceLocation: sourceLocation)
    }
}

/// The reply on the first `reply HEX` line of `output`.
private func reply(_ output: String) -> Result<KeychainReply, KeychainError>? {
    guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("reply ") }) else { return nil }
    guard let bytes = Hex.decode(line.dropFirst("reply ".count)) else { return nil }
    return try? ReplyCoder.decode(bytes)
}

private func status(_ reply: Result<KeychainReply, KeychainError>) -> Int32 {
    switch reply {
    case .success: 0
    case .failure(let error): error.status
    }
}

/// `text` as a Python string literal.
private func pythonString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}
