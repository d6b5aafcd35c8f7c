import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program running on a pseudo-terminal, driven like `expect`: wait for text on the screen,
/// then type. Lets tests answer hidden prompts as a person at a terminal would.
final class PseudoTerminal {
    private let master: Int32
    private let pid: pid_t
    private(set) var screen = ""
    /// The raw wait status, once the program has been reaped.
    private var exitStatus: Int32?

    /// The terminal's device (`/dev/pts/3`).
    let device: String

    /// Runs `executable` on a new pseudo-terminal, which belongs to `owner` (uid, gid) when given,
    /// as a login's terminal belongs to the user logged in.
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String], owner: (uid_t, gid_t)? = nil
    ) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw POSIXError(.EIO) }
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        self.master = master
        defer { close(slave) }
        guard let name = ttyname(slave) else { throw POSIXError(.ENOTTY) }
        device = String(cString: name)
        if let (uid, gid) = owner { fchown(slave, uid, gid) }
        let child = try ChildSpawn.spawn(
            executable.path, arguments, environment: environment, stdio: (nil, nil, nil),
            controllingTerminal: String(cString: name))
        pid = child
    }

    /// A test that ends early (a failed expectation) still ends its program.
    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(master)
    }

    /// The words inside the sheets drawn so far (the lines between a box's `│` borders), joined
    /// with single spaces: what a sheet says, however it wrapped.
    var sheetText: String {
        screen.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).compactMap { line -> String? in
            guard let first = line.firstIndex(of: "│"), let last = line.lastIndex(of: "│"), first < last else {
                return nil
            }
            return String(line[line.index(after: first)..<last])
        }.joined(separator: " ").split(separator: " ").joined(separator: " ")
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

    /// Sends `signal` to the program.
    /// Whether the program has made itself undumpable as ``ProcessHardening`` does, seen from
    /// outside: its core-file limit is zero, soft and hard (`/proc/PID/limits`; a shell's
    /// default keeps the hard limit).
    var coreFilesAreOff: Bool {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") })
        else { return false }
        return Array(line.split(separator: " ").dropFirst(4).prefix(2)) == ["0", "0"]
    }

    func send(signal: Int32) {
        kill(pid, signal)
    }

    /// Sends `signal` to the program's whole process group (it leads a session of its own on the
    /// terminal): the program and the children it waits for, as a closed terminal's hangup does.
    func sendToProcessGroup(signal: Int32) {
        kill(-pid, signal)
    }

    /// The terminal's modes now (shared by both sides of the pseudo-terminal).
    var modes: termios {
        var modes = termios()
        tcgetattr(master, &modes)
        return modes
    }

    /// True once line editing and echo are back on (within `timeout` seconds): keychaind restores
    /// the terminal of a sheet it drew when the sheet closes, which it does when the app exits.
    func lineModeReturns(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let lineMode = tcflag_t(ICANON | ECHO)
        while modes.c_lflag & lineMode != lineMode && Date() < deadline { usleep(20_000) }
        return modes.c_lflag & lineMode == lineMode
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
        exitStatus = status
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
