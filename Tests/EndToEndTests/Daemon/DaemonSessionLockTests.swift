import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// keychaind locks when logind reports a login session of its user locked, with logind played
/// by dbusmock's template on a private system bus.
@Suite(.serialized) struct DaemonSessionLockTests {
    @Test func aLockedLoginSessionLocksTheKeychainAndEndsOwnerSessions() throws {
        let logind = try LogindMock()
        defer { logind.stop() }
        let mine = try logind.addSession("c1", uid: getuid())
        let theirs = try logind.addSession("c2", uid: 65534)
        let daemon = try DaemonHarness(extra: ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address])
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["owner", "login"], input: "1234\n").status == 0)

        // Another user's session locking, and Lock signals forged by another program (broadcast,
        // and sent straight to every connection on the bus), lock nothing.
        try logind.lock(theirs)
        try logind.forgeLock(of: mine)
        usleep(1_500_000)
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: unlocked"))
        #expect(try daemon.shell.run(["apps", "list"]).status == 0, "the owner session should still be open")

        // This user's session: locked, and the owner session is over.
        try logind.lock(mine)
        #expect(try eventuallyLocked(daemon), "the keychain stayed unlocked after logind's Lock")
        #expect(try daemon.shell.run(["unlock"], input: "1234\n").status == 0)
        let afterLock = try daemon.shell.run(["apps", "list"])
        #expect(
            afterLock.stderr.contains("OSStatus -34018"),
            "the owner session outlived the lock: \(afterLock.stdout)\(afterLock.stderr)")

        // A screen locker setting LockedHint counts too.
        try logind.setLockedHint(of: mine, true)
        #expect(try eventuallyLocked(daemon), "the keychain stayed unlocked after LockedHint")
    }

    @Test func withoutASystemBusTheDaemonServesAsBefore() throws {
        let daemon = try DaemonHarness(extra: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/keychain-test-bus"])
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: unlocked"))
    }

    /// An idle daemon sleeps: neither the idle lock nor the wait for logind wakes it on a tick
    /// (each woke it four times a second: 72 switches in 3 s), and a session lock still reaches
    /// it at once. What remains is libdispatch's own worker-pool monitor, a timer it runs once a
    /// second on Linux (`_dispatch_workq_monitor_pools`): 3 switches in 3 s.
    @Test func anIdleDaemonFollowingLogindDoesNotWakeUp() throws {
        let logind = try LogindMock()
        defer { logind.stop() }
        let mine = try logind.addSession("c1", uid: getuid())
        let daemon = try DaemonHarness(idleLock: 300, extra: ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address])
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        let pid = try #require(try daemon.daemonPID())
        usleep(500_000)
        let before = try Self.contextSwitches(of: pid)
        sleep(3)
        // Per thread: a worker thread that ends meanwhile takes its own count away with it.
        let woken = try Self.contextSwitches(of: pid).reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
        #expect(woken <= 5, "keychaind's threads were switched in \(woken) times in 3 idle seconds")
        try logind.lock(mine)
        #expect(try eventuallyLocked(daemon), "the keychain stayed unlocked after logind's Lock")
    }

    /// Issue 53: after 5 idle minutes the keychain locked under a person working at a desktop
    /// whose apps asked nothing, and `secret-tool lookup` found nothing. Where the screen lock is
    /// followed (a graphical login session), the keychain locks with the screen, not for
    /// idleness; in a text session, the idle lock stands.
    @Test func aGraphicalSessionLocksWithTheScreenNotForIdleness() throws {
        let logind = try LogindMock()
        defer { logind.stop() }
        let mine = try logind.addSession("c1", uid: getuid())
        try logind.setType(of: mine, "wayland")
        let daemon = try DaemonHarness(idleLock: 1, extra: ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address])
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
        sleep(3)
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: unlocked"), "locked for idleness")
        try logind.lock(mine)
        #expect(try eventuallyLocked(daemon), "the keychain stayed unlocked after logind's Lock")

        try logind.setType(of: mine, "tty")
        #expect(try daemon.shell.run(["unlock"], input: "1234\n").status == 0)
        sleep(3)
        #expect(try eventuallyLocked(daemon), "a text session's keychain was not locked for idleness")
    }

    /// The context switches of each thread of `pid` so far, by thread id.
    private static func contextSwitches(of pid: Int32) throws -> [String: Int] {
        var switches: [String: Int] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8) else {
                continue
            }
            switches[thread] = status.split(separator: "\n").filter {
                $0.hasPrefix("voluntary_ctxt_switches") || $0.hasPrefix("nonvoluntary_ctxt_switches")
            }
            .compactMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
        }
        return switches
    }

    /// Whether `keychainctl status` says locked within 5 s.
    private func eventuallyLocked(_ daemon: DaemonHarness) throws -> Bool {
        for _ in 0..<50 {
            if try daemon.shell.run(["status"]).stdout.contains("state: locked") { return true }
            usleep(100_000)
        }
        return false
    }
}

/// dbusmock's logind on a private system bus.
final class LogindMock {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus(prefix: "logind")
        do {
            try bus.startMock(
                template: "logind",
                answering: [
                    "--dest=org.freedesktop.login1", "/org/freedesktop/login1",
                    "org.freedesktop.login1.Manager.ListSessions",
                ])
        } catch {
            bus.stop()
            throw error
        }
    }

    /// Adds an active session of `uid`; its object path.
    func addSession(_ id: String, uid: uid_t) throws -> String {
        try bus.send([
            "--dest=org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock.AddSession",
            "string:\(id)", "string:seat0", "uint32:\(uid)", "string:user\(uid)", "boolean:true",
        ])
        return "/org/freedesktop/login1/session/\(id)"
    }

    /// Sets the session's `Type` (`x11`, `wayland`, `tty`…; dbusmock's sessions are `test`).
    func setType(of session: String, _ type: String) throws {
        try bus.send([
            "--dest=org.freedesktop.login1", session, "org.freedesktop.DBus.Properties.Set",
            "string:org.freedesktop.login1.Session", "string:Type", "variant:string:\(type)",
        ])
    }

    /// logind's `Lock` signal for the session (what `loginctl lock-session` makes it send).
    func lock(_ session: String) throws {
        try bus.send(["--dest=org.freedesktop.login1", session, "org.freedesktop.login1.Session.Lock"])
    }

    /// A screen locker's `SetLockedHint`: logind then reports the property changed.
    func setLockedHint(of session: String, _ locked: Bool) throws {
        try bus.send([
            "--dest=org.freedesktop.login1", session, "org.freedesktop.login1.Session.SetLockedHint",
            "boolean:\(locked)",
        ])
    }

    /// A `Lock` signal for `session` sent by a program that is not logind: broadcast, and to each
    /// connection on the bus by its unique name.
    func forgeLock(of session: String) throws {
        let dbusSend = try bus.program("dbus-send")
        try bus.run(dbusSend, ["--system", "--type=signal", session, "org.freedesktop.login1.Session.Lock"])
        let names = try bus.send([
            "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames",
        ])
        let unique = names.split(separator: "\"").filter { $0.hasPrefix(":") }
        #expect(!unique.isEmpty, "no connections on the bus: \(names)")
        for name in unique {
            try bus.run(
                dbusSend,
                ["--system", "--type=signal", "--dest=\(name)", session, "org.freedesktop.login1.Session.Lock"])
        }
    }

    func stop() {
        bus.stop()
    }
}
