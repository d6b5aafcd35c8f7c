import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Makes the test process lead a login session of its own when the one it was started in has
/// no leader it can see.
///
/// keychaind opens owner sessions per login session, told apart by their leader's pid and start
/// time, and refuses one in a session whose leader it cannot find. CI starts the tests in a pid
/// namespace whose processes report session 0 (the leader is outside it), and a runner whose
/// session leader has exited is no better: there `keychainctl owner login` is refused, as it
/// should be. The children every test spawns inherit this process's session, so one `setsid`
/// here gives them all a session with a living leader: the test process.
///
/// `swift test` starts the tests as a process-group leader, which `setsid` refuses; so the
/// process first steps into the group of a short-lived child of its own (same session), which
/// leaves its old group empty, and then starts the session.
enum TestLoginSession {
    /// Evaluated once, before the first child that may need an owner session is started.
    static let ensured: Void = {
        let session = getsid(0)
        guard session <= 0 || !FileManager.default.fileExists(atPath: "/proc/\(session)/stat") else { return }
        if getpgrp() == getpid(), let child = groupOfItsOwn() {
            setpgid(0, child)
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        precondition(setsid() > 0, "the tests cannot start a login session of their own: errno \(errno)")
    }()

    /// A `sleep` in a process group of its own, in this session; its pid is the group's id.
    private static func groupOfItsOwn() -> pid_t? {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let words: [String] = ["sleep", "60"]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, "sleep", nil, &attributes, argv, nil) == 0 else { return nil }
        return pid
    }
}
