import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An X server of the test's own (Xvfb, from Debian's `xvfb`), driven with `xdotool` and
/// photographed with ImageMagick's `import`: a desktop for desktop prompts. Ended by its pid.
final class VirtualDisplay {
    /// `DISPLAY` for programs on it (`:57`).
    let name: String
    private let pid: pid_t
    private var stopped = false

    /// How many displays this process started: tests run at the same time each get their own.
    private static let started = Mutex(0)

    init() throws {
        // A display number no other test takes: from this process's pid, and a count of its own.
        let count = Self.started.withLock { started in
            defer { started += 1 }
            return started
        }
        let number = 100 + Int(getpid() % 1000) * 8 + count % 8
        name = ":\(number)"
        pid = try ChildSpawn.spawn(
            "/usr/bin/Xvfb", [name, "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
            environment: ["PATH": "/usr/bin:/bin"], stdio: (nil, nil, nil))
        let socket = "/tmp/.X11-unix/X\(number)"
        let deadline = Date().addingTimeInterval(10)
        while access(socket, F_OK) != 0 && Date() < deadline { usleep(50_000) }
        guard access(socket, F_OK) == 0 else {
            stop()
            throw POSIXError(.ETIMEDOUT)
        }
    }

    deinit { stop() }

    /// Ends the server by its pid.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Runs `program` with `arguments` on this display: its output.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let (read, write) = try ChildSpawn.pipe()
        let child = try ChildSpawn.spawn(
            program, arguments, environment: ["PATH": "/usr/bin:/bin", "DISPLAY": name], stdio: (nil, write, nil))
        close(write)
        let output = FileHandle(fileDescriptor: read, closeOnDealloc: true).readDataToEndOfFile()
        var status: Int32 = 0
        waitpid(child, &status, 0)
        return String(decoding: output, as: UTF8.self)
    }

    /// The id of the first window whose title contains `title`, waiting up to `seconds`.
    func window(titled title: String, seconds: Double = 15) throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let found = try run("/usr/bin/xdotool", ["search", "--name", title])
                .split(separator: "\n").first.map(String.init)
            if let found { return found }
            usleep(100_000)
        }
        return nil
    }

    /// A PNG of the whole screen at `path`.
    func screenshot(to path: String) throws {
        try run("/usr/bin/import", ["-window", "root", path])
    }

    /// Types `text` and presses Return, as a person at the keyboard would.
    func type(_ text: String) throws {
        try run("/usr/bin/xdotool", ["type", "--delay", "60", text])
        try run("/usr/bin/xdotool", ["key", "Return"])
    }
}
