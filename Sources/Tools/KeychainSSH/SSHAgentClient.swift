import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process on the other end of an agent connection, as the kernel names it: what the sheet
/// shows (its program's name, pid and full executable path), the terminal the sheet shows on,
/// and what a reuse window is kept for (its executable).
public struct SSHAgentClient: Sendable {
    /// Its pid.
    public let pid: Int32
    /// Its executable's full path, or "an unknown program" when it cannot be read.
    public let executable: String
    /// The pseudo-terminal that is its controlling terminal, when it is one of the user's; nil:
    /// the agent's own terminal, if it has one.
    public let terminal: String?

    /// A client: `pid`, running `executable`, on `terminal`.
    public init(pid: Int32, executable: String, terminal: String? = nil) {
        self.pid = pid
        self.executable = executable
        self.terminal = terminal
    }

    /// The process `pid` of `uid`, read from `/proc/PID`.
    static func of(pid: Int32, uid: uid_t) -> SSHAgentClient {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "an unknown program"
        return SSHAgentClient(pid: pid, executable: executable, terminal: terminal(of: pid, uid: uid))
    }

    /// How the sheet names it: `“ssh” (pid 1234, /usr/bin/ssh)`.
    var description: String {
        "“\((executable as NSString).lastPathComponent)” (pid \(pid), \(executable))"
    }

    /// The pseudo-terminal that is `pid`'s controlling terminal (`tty_nr` in
    /// `/proc/PID/stat`), when it is one and belongs to `uid`.
    private static func terminal(of pid: Int32, uid: UInt32) -> String? {
        guard let record = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = record.lastIndex(of: ")")
        else { return nil }
        // After the command's closing parenthesis: state, ppid, pgrp, session, tty_nr.
        let fields = record[record.index(after: end)...].split(separator: " ")
        guard fields.count > 4, let number = UInt32(fields[4]), number != 0 else { return nil }
        let major = (number >> 8) & 0xfff
        let minor = (number & 0xff) | ((number >> 12) & 0xfff00)
        // Unix 98 pseudo-terminals: majors 136 to 143.
        guard (136...143).contains(major) else { return nil }
        let path = "/dev/pts/\((major - 136) * 256 + minor)"
        var status = stat()
        // glibc's makedev, which Swift cannot import (a macro).
        let device =
            (UInt64(major & 0xfffff000) << 32) | (UInt64(major & 0xfff) << 8) | (UInt64(minor & 0xffffff00) << 12)
            | UInt64(minor & 0xff)
        guard stat(path, &status) == 0, status.st_uid == uid, status.st_rdev == device else { return nil }
        return path
    }
}
