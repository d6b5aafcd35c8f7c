import Foundation
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// Whether the session bus the bridge is on is the user's real one (DESIGN.md, "What a bus says
/// is the bus's word"). With the system daemon, keychaind takes the bridge's word for which
/// process sent a call, and the bridge takes the bus's: a bus a program of the user started (a
/// fake one answering `GetConnectionCredentials` with a trusted program's pid, or a real
/// `dbus-daemon` under its control) would have the bridge act for any process it names.
///
/// The bus is the user's real one when the process listening on it is root's, or a bus daemon
/// root installed (`dbus-daemon`, `dbus-broker`) that the user's service manager started:
/// `systemd --user`, root's program, whose parent is PID 1 (it is `user@UID.service`). That is
/// the bus of `dbus-user-session`, which Debian, Fedora and Ubuntu run for every login. A bus
/// from `dbus-launch`, `dbus-run-session` or a login script is one a user program started, and
/// is refused in system mode; the per-user daemon never asks (any program of the user can run
/// an app there anyway: Docs/SecurityModel.md).
enum SessionBusOrigin {
    /// The bus daemons root installs.
    static let busDaemons: Set<String> = ["dbus-daemon", "dbus-broker", "dbus-broker-launch"]

    /// nil when the process `pid` of `uid` listening on the bus is the user's real bus;
    /// otherwise why it is not.
    static func refusal(busPID pid: Int32, busUID uid: uid_t) -> String? {
        if uid == 0 { return nil }
        var current = pid
        // dbus-broker runs under dbus-broker-launch: walk up through root's bus programs.
        for _ in 0..<3 {
            guard let executable = ProcessFiles.executable(current) else {
                return "the bus's process (pid \(current)) cannot be read"
            }
            guard busDaemons.contains(URL(fileURLWithPath: executable).lastPathComponent), isRootOwned(executable) else {
                break
            }
            guard let parent = parentPID(current) else { return "the bus's process (pid \(current)) has ended" }
            if isServiceManager(parent) { return nil }
            current = parent
        }
        let program = ProcessFiles.executable(pid) ?? "pid \(pid)"
        return "the session bus is served by \(program) (pid \(pid)), which the user's service manager (systemd --user) "
            + "did not start: a bus a program of the user started could name any process as the sender of a call"
    }

    /// `systemd --user` of a login: root's systemd, started by PID 1.
    private static func isServiceManager(_ pid: Int32) -> Bool {
        guard let executable = ProcessFiles.executable(pid), isRootOwned(executable),
            URL(fileURLWithPath: executable).lastPathComponent == "systemd", parentPID(pid) == 1,
            let line = ProcessFiles.read(pid, "cmdline")
        else { return false }
        return line.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "--user" }
    }

    private static func parentPID(_ pid: Int32) -> Int32? {
        ProcessFiles.statNumber(1, ofProcess: pid).flatMap { Int32(exactly: $0) }
    }

    /// A file root owns that nobody else can write.
    private static func isRootOwned(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_uid == 0 && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }
}
