import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// fprintd for real, with libfprint's virtual device, on a private system bus with polkit
/// mocked to allow everything (reference/environment.md has the recipe), or with the machine's
/// real polkitd and the given rule alone. Nothing outside a temporary directory is touched.
/// `scan(_:)` puts a finger on the virtual reader.
final class FprintdHarness {
    private let bus: PrivateBus

    var directory: URL { bus.directory }
    var socket: URL { directory.appendingPathComponent("fp.sock") }
    var environment: [String: String] { bus.environment }

    /// fprintd on a bus of its own; with `polkitRule`, polkit is the real polkitd with that
    /// rule as its only addition (root is authorized for everything, as polkit always does).
    init(polkitRule: String? = nil) throws {
        bus = try PrivateBus(prefix: "fprintd")
        do {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
            if let polkitRule {
                let rules = directory.appendingPathComponent("rules.d")
                try FileManager.default.createDirectory(at: rules, withIntermediateDirectories: true)
                try polkitRule.write(
                    to: rules.appendingPathComponent("50-test.rules"), atomically: true, encoding: .utf8)
                // polkitd reads its rules as its own user.
                chmod(rules.path, 0o755)
                chmod(rules.appendingPathComponent("50-test.rules").path, 0o644)
                try bus.startPolkitd(rules: rules)
            } else {
                try bus.startMock(
                    template: "polkitd",
                    answering: [
                        "--dest=org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                        "org.freedesktop.DBus.Mock.AllowUnknown", "boolean:true",
                    ])
            }
            try bus.launchService(
                bus.program("fprintd", daemon: true), ["--no-timeout"],
                extra: [
                    "FP_VIRTUAL_DEVICE": socket.path, "STATE_DIRECTORY": directory.appendingPathComponent("state").path,
                ])
            try bus.retry("fprintd") { try bus.run(bus.program("fprintd-list"), [Self.user]) }
        } catch {
            // What was started before the failure is ended here: nothing outlives the test.
            bus.stop()
            throw error
        }
    }

    static var user: String {
        ProcessInfo.processInfo.environment["USER"] ?? (getuid() == 0 ? "root" : String(getuid()))
    }

    /// Enrolls `finger` of `user` (the test's by default) with the print `print` (5 scans).
    func enroll(_ finger: String, print: String, user: String = FprintdHarness.user) throws {
        let enroll = try bus.launch(try bus.program("fprintd-enroll"), ["-f", finger, user])
        scanUntilExit(enroll, print)
        guard enroll.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }

    /// Sends `SCAN print` every 0.2 s while `process` runs (the virtual reader only takes
    /// commands while an operation is under way), for at most 20 s.
    func scanUntilExit(_ process: SpawnedProgram, _ print: String) {
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
            for pid in processes(named: "fprintd-verify") where !scanned.contains(pid) {
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

    /// The processes running `name` on this harness's bus (their `DBUS_SYSTEM_BUS_ADDRESS` is
    /// its): another test's fprintd, running at the same time, has readers of its own.
    func processes(named name: String) -> [Int32] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        let busVariable = Data("DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)".utf8)
        return pids.filter { pid in
            let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
            guard String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self).hasSuffix(name) else { return false }
            let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
            return environment.split(separator: 0).contains { Data($0) == busVariable }
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return }
        let command = "SCAN \(print)"
        // MSG_NOSIGNAL: the reader may close first; that must not SIGPIPE the test process.
        _ = command.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    func stop() {
        bus.stop()
    }
}
