#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A full-screen program in a detached tmux session: keys in with send-keys, the screen out
/// with capture-pane, as a person would see it.
final class TmuxSession {
    let socket: String
    let environment: [String: String]

    init(_ executable: URL, environment: [String: String], width: Int = 200, height: Int = 40) throws {
        socket = "/tmp/tmux-\(UUID().uuidString.prefix(8)).sock"
        var environment = environment
        environment["TERM"] = environment["TERM"] ?? "xterm-256color"
        self.environment = environment
        let assignments = ["XDG_DATA_HOME", "HOME", "PATH", "TERM"].compactMap { name in environment[name].map { "\(name)='\($0)'" } }
        let command = "env \(assignments.joined(separator: " ")) '\(executable.path)'; echo EXIT=$?; sleep 600"
        try tmux(["new-session", "-d", "-s", "t", "-x", String(width), "-y", String(height), command])
    }

    /// The screen now.
    var screen: String {
        (try? tmux(["capture-pane", "-p", "-t", "t"])) ?? ""
    }

    /// Waits until `text` is on the screen; true when it appeared.
    @discardableResult
    func waitFor(_ text: String, timeout: Double = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if screen.contains(text) { return true }
            usleep(50_000)
        }
        return false
    }

    /// Types keys (tmux key names, such as "Enter" and "Escape", or literal text).
    func send(_ keys: String...) {
        _ = try? tmux(["send-keys", "-t", "t"] + keys)
    }

    func close() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: socket)
    }

    /// Runs the tmux client with posix_spawn and waitpid: Foundation's `Process` would wait
    /// forever, because the tmux server it daemonizes inherits the descriptor `Process` watches.
    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { throw POSIXError(.EIO) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Only capture-pane's output is read; the server new-session starts gets /dev/null.
        if arguments.first == "capture-pane" {
            posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        let argv = (["/usr/bin/tmux", "-S", socket] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, argv, envp)
        Glibc.close(pipe[1])
        defer { Glibc.close(pipe[0]) }
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return String(decoding: output, as: UTF8.self)
    }
}
