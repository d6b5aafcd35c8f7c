import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A system daemon of the test's own: `keychaind --system` started directly as its user with
/// `setpriv` (CI has no systemd), its state and socket in a directory of the test's, and
/// clients run as other users with `keychainctl --system-socket`. The daemon is stopped by its
/// pid when the test ends.
final class SystemDaemonHarness {
    /// The test's directory (root's, 0755), holding `state/`, `run/` and the daemon's log.
    let base: URL
    let user: LocalUser
    private let shell: CommandRunner
    private(set) var pid: pid_t = 0
    private let capabilities: [String]
    /// The daemon's limit on open files (soft and hard), as a service manager sets it; nil:
    /// this process's.
    private let descriptorLimit: Int?
    /// The daemon's system bus (`DBUS_SYSTEM_BUS_ADDRESS`): none that works, unless a test
    /// gives one of its own (fprintd's).
    private let systemBus: String
    /// More of keychaind's options (`--tpm TCTI`), for this start and every later one.
    var extraArguments: [String]
    /// True to start the daemon as on a kernel without Landlock: its calls fail with ENOSYS.
    private let withoutLandlock: Bool

    var state: URL { base.appendingPathComponent("state") }
    var runtime: URL { base.appendingPathComponent("run") }
    var socket: String { runtime.appendingPathComponent("socket").path }
    var log: URL { base.appendingPathComponent("keychaind.log") }
    /// The app registry (root's, 0755): ``register(_:)`` writes into it.
    var registry: URL { base.appendingPathComponent("apps.d") }
    /// Root's directory (0755) for programs the daemon can trust.
    var trustedPrograms: URL { base.appendingPathComponent("bin") }
    static let keychaind = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("keychaind").path

    /// Starts a system daemon run as `user` with these capabilities (setpriv's names), given
    /// as systemd's `AmbientCapabilities=` would give them, and at most `descriptorLimit` open
    /// files (systemd's default for a service is 1,024 soft), reaching `systemBus` (an
    /// address) as its system bus, with `extraArguments` after the harness's own. Without a TPM
    /// by default (`--tpm none`): a machine's own TPM, should the test machine have one the
    /// daemon can open, would get an NV counter from every test's keychain.
    init(
        user: LocalUser? = nil, capabilities: [String] = ["sys_ptrace"], descriptorLimit: Int? = nil,
        systemBus: String = "unix:path=/nonexistent", extraArguments: [String] = ["--tpm", "none"],
        withoutLandlock: Bool = false
    ) throws {
        self.extraArguments = extraArguments
        self.withoutLandlock = withoutLandlock
        self.user = try user ?? LocalUser.daemon()
        self.capabilities = capabilities
        self.descriptorLimit = descriptorLimit
        self.systemBus = systemBus
        base = URL(fileURLWithPath: "/tmp/kcsys-\(UUID().uuidString.prefix(8))")
        shell = try CommandRunner()
        for directory in [base, state, runtime, registry, trustedPrograms] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chmod(directory.path, 0o755)
        }
        chown(state.path, self.user.uid, self.user.gid)
        chmod(state.path, 0o700)
        chown(runtime.path, self.user.uid, self.user.gid)
        try start(capabilities: capabilities)
    }

    /// The daemon's command line, as its user.
    func commandLine(capabilities: [String]) -> [String] {
        let raised = capabilities.map { "+\($0)" }.joined(separator: ",")
        let limited = descriptorLimit.map { ["/usr/bin/prlimit", "--nofile=\($0):\($0)", "--"] } ?? []
        return limited + user.setpriv
            + (capabilities.isEmpty ? [] : ["--inh-caps=\(raised)", "--ambient-caps=\(raised)"])
            + (withoutLandlock ? ["/usr/bin/python3", "-c", Self.withoutLandlockScript] : []) + [
                Self.keychaind, "--system", "--state-directory", state.path, "--runtime-directory", runtime.path,
                "--registry", registry.path, "--idle-lock", "0",
            ] + extraArguments
    }

    /// Runs its arguments with Landlock's first call (`landlock_create_ruleset`, 444 on x86_64)
    /// failing with ENOSYS, as on a kernel built without it: a seccomp filter (libseccomp,
    /// through ctypes), which the daemon's front and workers inherit.
    static let withoutLandlockScript = """
        import ctypes, os, sys
        seccomp = ctypes.CDLL("libseccomp.so.2")
        seccomp.seccomp_init.restype = ctypes.c_void_p
        filter = ctypes.c_void_p(seccomp.seccomp_init(0x7fff0000))
        assert seccomp.seccomp_rule_add(filter, 0x00050000 | 38, 444, 0) == 0
        assert seccomp.seccomp_load(filter) == 0
        os.execv(sys.argv[1], sys.argv[1:])
        """

    /// The environment the daemon and its clients run in: no session bus, no system bus (so
    /// the daemon follows no logind of this machine), no home.
    static let environment = [
        "PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent",
        "KEYCHAIN_PINENTRY": "none",
    ]

    private func start(capabilities: [String]) throws {
        let output = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw POSIXError(.EIO) }
        defer { close(output) }
        let line = commandLine(capabilities: capabilities)
        // A killed daemon left its socket file: the new one is ready when it binds its own.
        unlink(socket)
        var environment = Self.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus
        pid = try ChildSpawn.spawn(
            line[0], Array(line.dropFirst()), environment: environment, stdio: (nil, output, output))
        let deadline = Date().addingTimeInterval(15)
        var info = stat()
        while Date() < deadline {
            if lstat(socket, &info) == 0 { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                break
            }
            usleep(20_000)
        }
        Issue.record("keychaind --system did not start: \(daemonLog)")
        throw POSIXError(.EIO)
    }

    /// What the daemon wrote to standard error.
    var daemonLog: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// A copy of keychainctl named `name` in `directory` (``trustedPrograms`` by default),
    /// belonging to `owner` (root by default): another app, as the daemon sees it.
    func program(_ name: String, in directory: URL? = nil, owner: LocalUser? = nil) throws -> URL {
        let copy = (directory ?? trustedPrograms).appendingPathComponent(name)
        try FileManager.default.copyItem(at: CommandRunner.binary, to: copy)
        chmod(copy.path, 0o755)
        if let owner { chown(copy.path, owner.uid, owner.gid) }
        return copy
    }

    /// Registers an app: writes the JSON of its file in ``registry``, as an administrator
    /// would, known by its executable (with or without the file's SHA-256) or its Flatpak ID.
    func register(
        _ name: String, identifier: String, executable: String? = nil, flatpak: String? = nil, sha256: String? = nil,
        groups: [String], applicationGroups: [String]? = nil, promptAgent: Bool = false,
        secretServiceBridge: Bool = false
    ) throws {
        var registration: [String: Any] = ["identifier": identifier, "keychain-access-groups": groups]
        if promptAgent { registration["prompt-agent"] = true }
        if secretServiceBridge { registration["secret-service-bridge"] = true }
        registration["com.apple.security.application-groups"] = applicationGroups
        registration["executable"] = executable
        registration["flatpak"] = flatpak
        registration["sha256"] = sha256
        let file = registry.appendingPathComponent("\(name).json")
        try JSONSerialization.data(withJSONObject: registration, options: .sortedKeys).write(to: file)
        chmod(file.path, 0o644)
    }

    /// Runs `keychainctl --system-socket SOCKET arguments…` (or `program`, a copy, with
    /// `prefix` before it: `env LD_PRELOAD=…`, `strace`) as `user` with `input` on standard
    /// input.
    func keychainctl(
        as user: LocalUser, _ arguments: [String], input: String = "", socket: String? = nil, program: URL? = nil,
        prefix: [String] = []
    ) throws -> CommandRunner.Output {
        let line =
            user.setpriv + prefix + [(program ?? CommandRunner.binary).path, "--system-socket", socket ?? self.socket]
            + arguments
        return try shell.script("printf %s \(Self.quoted(input)) | \(line.map(Self.quoted).joined(separator: " "))")
    }

    /// Runs a shell command line as `user`.
    func shellCommand(as user: LocalUser, _ command: String) throws -> CommandRunner.Output {
        try shell.script((user.setpriv + ["/bin/sh", "-c", command]).map(Self.quoted).joined(separator: " "))
    }

    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A line of `/proc/PID/status` of the daemon's front (or of `process`: a worker), without
    /// its name (`CapEff`, `NoNewPrivs`…).
    func status(_ field: String, of process: pid_t? = nil) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(process ?? pid)/status", encoding: .utf8) else {
            return nil
        }
        return text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.map {
            $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces)
        }
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: pid_t) -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name in
            guard let candidate = pid_t(name),
                let status = try? String(contentsOfFile: "/proc/\(name)/status", encoding: .utf8),
                status.contains("\nPPid:\t\(pid)\n")
            else { return nil }
            return candidate
        }
    }

    /// The worker that serves `user` (`keychaind --system-worker UID`, a child of the front),
    /// if one runs.
    func worker(of user: LocalUser) -> pid_t? { Self.worker(of: user.uid, front: pid) }

    /// The worker of `uid` among the children of `front`.
    static func worker(of uid: uid_t, front pid: pid_t) -> pid_t? {
        children(of: pid).first { candidate in
            guard let line = FileManager.default.contents(atPath: "/proc/\(candidate)/cmdline") else { return false }
            let arguments = line.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let flag = arguments.firstIndex(of: "--system-worker"), arguments.count > flag + 1 else {
                return false
            }
            return arguments[flag + 1] == String(uid)
        }
    }

    /// Starts the daemon again on the same files, after killing it (SIGKILL) if it runs: a
    /// crash, then the restart systemd would do.
    func restart() throws {
        if pid > 0 {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            pid = 0
        }
        try start(capabilities: capabilities)
    }

    /// Stops the daemon (SIGTERM, then SIGKILL by pid) and removes the directory.
    func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: base)
        try? FileManager.default.removeItem(at: shell.home)
    }

    /// Stops the daemon: SIGTERM, then SIGKILL by pid.
    func stop() {
        if pid > 0 {
            ChildSpawn.end(pid, within: 10)
            pid = 0
        }
    }
}
