import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A full-screen program in a detached tmux session: keys in with send-keys, the screen out
/// with capture-pane, as a person would see it.
final class TmuxSession {
    let socket: String
    let environment: [String: String]

    /// Runs `executable` in a new session; `afterExit` is a shell command run in the pane once
    /// the program ended (to look at the terminal it left behind).
    init(
        _ executable: URL, _ arguments: [String] = [], environment: [String: String], width: Int = 200,
        height: Int = 40, afterExit: String = ""
    ) throws {
        socket = "/tmp/tmux-\(UUID().uuidString.prefix(8)).sock"
        var environment = environment
        environment["TERM"] = environment["TERM"] ?? "xterm-256color"
        self.environment = environment
        let assignments = ["XDG_DATA_HOME", "HOME", "PATH", "TERM", "KEYCHAIN_PINENTRY"].compactMap { name in
            environment[name].map { "\(name)='\($0)'" }
        }
        // The pane's shell survives the program's SIGINT, as an interactive shell does.
        let command =
            "trap : INT; env \(assignments.joined(separator: " ")) "
            + ([executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ") + "; echo EXIT=$?; "
            + "\(afterExit.isEmpty ? "" : afterExit + "; ")sleep 600"
        try tmux(["new-session", "-d", "-s", "t", "-x", String(width), "-y", String(height), command])
    }

    /// The screen now.
    var screen: String {
        (try? tmux(["capture-pane", "-p", "-t", "t"])) ?? ""
    }

    /// A tmux format for the pane, such as `#{alternate_on}`.
    func display(_ format: String) -> String {
        ((try? tmux(["display-message", "-p", "-t", "t", format])) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
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

    /// Changes the window's size, as a person dragging the terminal's corner does (SIGWINCH).
    func resize(width: Int, height: Int) {
        _ = try? tmux(["resize-window", "-t", "t", "-x", String(width), "-y", String(height)])
    }

    /// Ends the tmux server and the program in it.
    func close() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: socket)
    }

    deinit { close() }

    /// Runs the tmux client (found on `PATH`) and waits for it: Foundation's `Process` would
    /// wait forever, because the tmux server it daemonizes inherits the descriptor `Process`
    /// watches. ``ChildSpawn`` gives the client, and so the server, no other descriptor.
    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        guard let program = ChildSpawn.find("tmux") else { throw POSIXError(.ENOENT) }
        let pipe = try ChildSpawn.pipe()
        defer { Glibc.close(pipe.read) }
        // Only capture-pane's and display-message's output is read; the server new-session
        // starts gets /dev/null.
        let pid: pid_t
        do {
            pid = try ChildSpawn.spawn(
                program, ["-S", socket] + arguments, environment: environment,
                stdio: (
                    nil, ["capture-pane", "display-message"].contains(arguments.first ?? "") ? pipe.write : nil, nil
                ))
        } catch {
            Glibc.close(pipe.write)
            throw error
        }
        Glibc.close(pipe.write)
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe.read, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
