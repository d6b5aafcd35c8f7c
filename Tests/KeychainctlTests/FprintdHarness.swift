#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// fprintd for real, with libfprint's virtual device, on a private system bus with polkit
/// mocked to allow everything (reference/environment.md has the recipe). Nothing outside a
/// temporary directory is touched. `scan(_:)` puts a finger on the virtual reader.
final class FprintdHarness {
    let directory: URL
    private var processes: [Process] = []

    var socket: URL { directory.appendingPathComponent("fp.sock") }
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory.appendingPathComponent("bus").path)"
        return environment
    }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/fprintd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>system</type><listen>unix:path=\(directory.appendingPathComponent("bus").path)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/><allow user="*"/></policy></busconfig>
            """
        try configuration.write(to: directory.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        do {
            try start()
        } catch {
            // What was started before the failure is ended here: nothing outlives the test.
            stop()
            throw error
        }
    }

    private func start() throws {
        processes.append(try launch(program("dbus-daemon"), ["--config-file=\(directory.appendingPathComponent("bus.conf").path)", "--nofork"], extra: [:]))
        try retry("the private bus") {
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("bus").path) else { throw POSIXError(.ENOENT) }
        }
        processes.append(try launch(try pythonWithDBusMock(), ["-m", "dbusmock", "--system", "--template", "polkitd"], extra: [:]))
        try retry("polkit mock") {
            try run(program("dbus-send"), ["--system", "--print-reply", "--dest=org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.DBus.Mock.AllowUnknown", "boolean:true"])
        }
        processes.append(try launch(program("fprintd", daemon: true), ["--no-timeout"], extra: [
            "FP_VIRTUAL_DEVICE": socket.path, "STATE_DIRECTORY": directory.appendingPathComponent("state").path,
        ]))
        try retry("fprintd") { try run(program("fprintd-list"), [Self.user]) }
    }

    static var user: String { ProcessInfo.processInfo.environment["USER"] ?? (getuid() == 0 ? "root" : String(getuid())) }

    /// Enrolls `finger` with the print `print` (5 scans).
    func enroll(_ finger: String, print: String) throws {
        let enroll = try launch(try program("fprintd-enroll"), ["-f", finger, Self.user], extra: [:])
        scanUntilExit(enroll, print)
        guard enroll.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }

    /// Sends `SCAN print` every 0.2 s while `process` runs (the virtual reader only takes
    /// commands while an operation is under way), for at most 20 s.
    func scanUntilExit(_ process: Process, _ print: String) {
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline {
            scan(print)
            usleep(200_000)
        }
        process.waitUntilExit()
    }

    /// Puts `print` on the reader once for each `fprintd-verify` that runs while `running()`
    /// holds, half a second after it appears (when it is verifying). One scan per verification:
    /// a spare scan would wait in the virtual reader and answer the next one.
    func scanEachVerification(_ print: String, while running: () -> Bool) {
        var seen: [Int32: Date] = [:]
        var scanned: Set<Int32> = []
        while running() {
            for pid in Self.processes(named: "fprintd-verify") where !scanned.contains(pid) {
                let first = seen[pid] ?? Date()
                seen[pid] = first
                if Date().timeIntervalSince(first) > 0.5 {
                    scan(print)
                    scanned.insert(pid)
                }
            }
            usleep(50_000)
        }
    }

    static func processes(named name: String) -> [Int32] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return pids.filter { pid in
            let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
            return String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self).hasSuffix(name)
        }
    }

    /// One command to the virtual reader; ignored when the reader is not listening yet.
    func scan(_ print: String) {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            let bytes = Array(socket.path.utf8)
            path.copyBytes(from: bytes.prefix(path.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return }
        let command = "SCAN \(print)"
        // MSG_NOSIGNAL: the reader may close first; that must not SIGPIPE the test process.
        _ = command.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    func stop() {
        for process in processes.reversed() where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    private func run(_ path: String, _ arguments: [String]) throws -> String {
        let process = try launch(path, arguments, extra: [:])
        let output = (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
        return String(decoding: output, as: UTF8.self)
    }

    private func launch(_ path: String, _ arguments: [String], extra: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment.merging(extra) { _, new in new }
        process.standardOutput = Pipe()
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// `name` on `PATH`; a daemon (fprintd) also in the directories distributions keep daemons
    /// in, which are never on `PATH`.
    private func program(_ name: String, daemon: Bool = false) throws -> String {
        let path = (environment["PATH"] ?? "/usr/bin:/bin") + (daemon ? ":/usr/libexec:/usr/lib/fprintd" : "")
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

    private func retry(_ what: String, _ body: () throws -> Void) throws {
        for _ in 0..<100 {
            if (try? body()) != nil { return }
            usleep(100_000)
        }
        try body()
    }
}

/// A program a test needs is not installed.
struct MissingProgram: Error, CustomStringConvertible {
    let description: String
}
