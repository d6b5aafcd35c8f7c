#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A program running on a pseudo-terminal, driven like `expect`: wait for text on the screen,
/// then type. Lets tests answer hidden prompts as a person at a terminal would.
final class PseudoTerminal {
    private let master: Int32
    private let pid: pid_t
    private(set) var screen = ""
    /// The raw wait status, once the program has been reaped.
    private var exitStatus: Int32?

    init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw POSIXError(.EIO) }
        self.master = master
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for target in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_adddup2(&actions, slave, target)
        }
        posix_spawn_file_actions_addclose(&actions, master)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID (glibc; hidden behind _GNU_SOURCE)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        close(slave)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        pid = child
    }

    /// Reads the terminal until `text` appears (or `timeout` passes); true when it did.
    @discardableResult
    func expect(_ text: String, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !screen.contains(text) && Date() < deadline {
            guard readAvailable(waitMilliseconds: 50) else { break }
        }
        return screen.contains(text)
    }

    /// Reads the terminal until `text` has appeared `count` times; true when it has.
    @discardableResult
    func expect(_ text: String, times count: Int, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while screen.components(separatedBy: text).count - 1 < count && Date() < deadline {
            guard readAvailable(waitMilliseconds: 50) else { break }
        }
        return screen.components(separatedBy: text).count - 1 >= count
    }

    /// True while the program runs (reading what it printed meanwhile).
    var isRunning: Bool {
        _ = readAvailable(waitMilliseconds: 0)
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return true }
        exitStatus = status
        return false
    }

    /// Types `text` (use "\r" for Enter).
    func type(_ text: String) {
        _ = text.withCString { write(master, $0, strlen($0)) }
    }

    /// Waits for the program to exit and returns its exit status.
    func wait() -> Int32 {
        let deadline = Date().addingTimeInterval(30)
        while readAvailable(waitMilliseconds: 50) && Date() < deadline {}
        // A program still waiting for input at the deadline is stuck: end it, so the test fails
        // instead of hanging.
        if Date() >= deadline { kill(pid, SIGKILL) }
        var status: Int32 = exitStatus ?? 0
        if exitStatus == nil { waitpid(pid, &status, 0) }
        close(master)
        // Exit status, or 128 + the signal that ended it (as shells report it).
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// False once the terminal closed (the program exited); true while it may say more.
    private func readAvailable(waitMilliseconds: Int32) -> Bool {
        var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, waitMilliseconds) > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(master, &buffer, buffer.count)
        guard count > 0 else { return false }
        screen += String(decoding: buffer[0..<count], as: UTF8.self)
        return true
    }
}
