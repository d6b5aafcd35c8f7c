import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus bus of the test's own that allows everything (reference/environment.md has the
/// recipe), in a temporary directory: a system bus, or with `session` a session bus. The
/// services a test starts on it (fprintd, dbusmock's polkit and logind, the Secret Service,
/// gnome-keyring) are its children, killed by pid in ``stop()``. Nothing outside the directory
/// is touched.
final class PrivateBus {
    let directory: URL
    /// True for a session bus.
    let isSession: Bool
    private var processes: [SpawnedProgram] = []

    /// The environment that points programs at this bus (`DBUS_SYSTEM_BUS_ADDRESS`, or
    /// `DBUS_SESSION_BUS_ADDRESS` for a session bus).
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[isSession ? "DBUS_SESSION_BUS_ADDRESS" : "DBUS_SYSTEM_BUS_ADDRESS"] = address
        return environment
    }

    var address: String { "unix:path=\(directory.appendingPathComponent("bus").path)" }

    /// - Parameters:
    ///   - session: a session bus rather than a system bus.
    ///   - serviceDirectories: where the bus finds the activation files of the services it
    ///     starts on demand, first first (as the session bus reads the user's before the system's).
    ///   - daemonEnvironment: added to the bus's environment, which the services it starts get.
    init(
        prefix: String, session: Bool = false, serviceDirectories: [String] = [],
        daemonEnvironment: [String: String] = [:]
    ) throws {
        isSession = session
        directory = URL(fileURLWithPath: "/tmp/\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Other users' programs (the system daemon's fprintd tools, polkitd) reach the bus here.
        chmod(directory.path, 0o755)
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" \
            "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>\(session ? "session" : "system")</type>\
            <listen>unix:path=\(directory.appendingPathComponent("bus").path)</listen><auth>EXTERNAL</auth>
            \(serviceDirectories.map { "<servicedir>\($0)</servicedir>" }.joined())
            <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/><allow \
            user="*"/></policy></busconfig>
            """
        try configuration.write(to: directory.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        do {
            try launchService(
                program("dbus-daemon"),
                ["--config-file=\(directory.appendingPathComponent("bus.conf").path)", "--nofork"],
                extra: daemonEnvironment)
            try retry("the private bus") {
                guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("bus").path) else {
                    throw POSIXError(.ENOENT)
                }
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Starts dbusmock's `template` (`polkitd`, `logind`) on the bus and waits until it answers
    /// `probe` (a `dbus-send` argument list).
    func startMock(template: String, answering probe: [String]) throws {
        try launchService(try pythonWithDBusMock(), ["-m", "dbusmock", "--system", "--template", template])
        try retry("the \(template) mock") { try send(probe) }
    }

    /// Starts the machine's real polkitd on the bus, reading its rules from `rules` alone: in a
    /// mount namespace of its own, `rules` is mounted over `/etc/polkit-1/rules.d` (nothing of
    /// the machine's changes). polkitd keeps the distribution's actions and default rules.
    func startPolkitd(rules: URL) throws {
        let polkitd = try program("polkitd", daemon: true)
        try launchService(
            try program("unshare"),
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$0\" /etc/polkit-1/rules.d && exec \"$1\" --no-debug", rules.path, polkitd,
            ])
        try retry("polkitd") {
            try send([
                "--dest=org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.PolicyKit1.Authority",
                "string:BackendVersion",
            ])
        }
    }

    /// `dbus-send --system --print-reply arguments…` (`--session` on a session bus): its output,
    /// or an error when it fails.
    @discardableResult
    func send(_ arguments: [String]) throws -> String {
        try run(program("dbus-send"), [isSession ? "--session" : "--system", "--print-reply"] + arguments)
    }

    /// Starts a long-running program that the bus stops with the rest; `input`, when given, is
    /// written to its standard input, which then closes.
    @discardableResult
    func launchService(
        _ path: String, _ arguments: [String], extra: [String: String] = [:], input: String? = nil
    ) throws -> SpawnedProgram {
        let program = try launch(path, arguments, extra: extra, input: input)
        processes.append(program)
        return program
    }

    /// Starts a program in the bus's environment plus `extra`.
    func launch(
        _ path: String, _ arguments: [String], extra: [String: String] = [:], input: String? = nil,
        capturingOutput: Bool = false
    ) throws -> SpawnedProgram {
        try SpawnedProgram(
            path, arguments, environment: environment.merging(extra) { _, new in new }, input: input,
            capturingOutput: capturingOutput)
    }

    /// Runs a program to its end: its output, or an error when it fails.
    @discardableResult
    func run(_ path: String, _ arguments: [String]) throws -> String {
        let program = try launch(path, arguments, capturingOutput: true)
        let output = program.readOutputToEnd()
        guard program.terminationStatus == 0 else { throw POSIXError(.EIO) }
        return String(decoding: output, as: UTF8.self)
    }

    /// `name` on `PATH`; a daemon (fprintd, polkitd) also in the directories distributions keep daemons
    /// in, which are never on `PATH`.
    func program(_ name: String, daemon: Bool = false) throws -> String {
        let path =
            (environment["PATH"] ?? "/usr/bin:/bin")
            + (daemon ? ":/usr/libexec:/usr/lib/fprintd:/usr/lib/polkit-1" : "")
        guard let found = ChildSpawn.find(name, path: path) else {
            throw MissingProgram(description: "\(name) is not installed (on PATH); .ci/run installs it")
        }
        return found
    }

    /// The first python3 on `PATH` that has dbusmock (Debian's carries python3-dbusmock; a
    /// pyenv one first on PATH may not).
    private func pythonWithDBusMock() throws -> String {
        for directory in (environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(directory)/python3"
            guard access(candidate, X_OK) == 0 else { continue }
            if (try? run(candidate, ["-c", "import dbusmock"])) != nil { return candidate }
        }
        throw MissingProgram(description: "no python3 on PATH has dbusmock; .ci/run installs python3-dbusmock")
    }

    /// Waits until a program on the bus owns `name` (at most 10 s).
    func waitForOwner(of name: String) throws {
        try retry(name) {
            try send([
                "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetNameOwner",
                "string:\(name)",
            ])
        }
    }

    /// Runs `body` until it succeeds, every 0.1 s for 10 s.
    func retry(_ what: String, _ body: () throws -> Void) throws {
        for _ in 0..<100 {
            if (try? body()) != nil { return }
            usleep(100_000)
        }
        try body()
    }

    /// Kills every service by its pid, waits for each, and removes the directory.
    func stop() {
        for program in processes.reversed() { program.end() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A program a test needs is not installed.
struct MissingProgram: Error, CustomStringConvertible {
    let description: String
}
