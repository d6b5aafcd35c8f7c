import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// A login session as the kernel numbers it (`setsid`), told apart from every later session
/// with the same number by when its leader started.
///
/// A session id is its leader's pid, and pids are reused: once a leader exits, a program that
/// forks until it gets that pid and calls `setsid` has a session with the same id (about 32,000
/// forks, seconds). Its leader started later, though, and start times only grow: so a session
/// is the pair, and it is over once no process with that pid and start time is alive.
struct LoginSession: Hashable, Sendable {
    /// The session id: its leader's pid.
    let id: Int32
    /// When the leader started, in clock ticks after boot (field 22 of `/proc/PID/stat`).
    let leaderStart: UInt64

    /// Session `id` as it is now; nil when its leader has exited (a session without a leader
    /// cannot be told from a later one, so it has no owner session).
    static func current(_ id: Int32) -> LoginSession? {
        guard id > 0, let start = ProcessFiles.startTime(id) else { return nil }
        return LoginSession(id: id, leaderStart: start)
    }

    /// True while the session's leader is alive: the same pid, started at the same time.
    var isAlive: Bool { ProcessFiles.startTime(id) == leaderStart }
}
