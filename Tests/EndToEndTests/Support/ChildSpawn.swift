import CKeychainSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `posix_spawn` as a long-lived, many-threaded parent must use it: the child gets exactly the
/// descriptors it is given (every other one is closed, so a daemon it starts, such as the tmux
/// server, cannot keep another test's pipe open and hang its reader), an empty signal mask and
/// every signal at its default disposition (the test thread blocks HUP, INT, TERM and CHLD; a
/// child that inherits that survives `tmux kill-server` and SIGTERM).
enum ChildSpawn {
    /// A pipe whose ends close on exec.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else { throw POSIXError(.EIO) }
        return (ends[0], ends[1])
    }

    /// Starts `path` with `arguments` and `environment`, its standard input, output and error on
    /// `stdio` (nil: /dev/null), and returns its pid.
    ///
    /// - Parameter controllingTerminal: a terminal device the child opens as its standard input,
    ///   output and error in a new session, which makes it the child's controlling terminal
    ///   (`/dev/tty`), as a login or a terminal emulator does; `stdio` is then ignored.
    static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String],
        stdio: (input: Int32?, output: Int32?, error: Int32?), controllingTerminal: String? = nil
    ) throws -> pid_t {
        TestLoginSession.ensured
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let controllingTerminal {
            // glibc runs setsid before the file actions: this open acquires the terminal.
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, controllingTerminal, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDOUT_FILENO)
            posix_spawn_file_actions_adddup2(&actions, STDIN_FILENO, STDERR_FILENO)
        } else {
            for (descriptor, target, mode) in [
                (stdio.input, STDIN_FILENO, O_RDONLY), (stdio.output, STDOUT_FILENO, O_WRONLY),
                (stdio.error, STDERR_FILENO, O_WRONLY),
            ] {
                if let descriptor {
                    posix_spawn_file_actions_adddup2(&actions, descriptor, target)
                } else {
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
                }
            }
        }
        kc_spawn_file_actions_closefrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // POSIX_SPAWN_SETSID is 0x80 in glibc, hidden behind _GNU_SOURCE.
        let flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | (controllingTerminal != nil ? 0x80 : 0)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        return pid
    }

    /// The full path of `program` on `PATH`.
    static func find(_ program: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        for directory in (path ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// One line of `handle`'s output, waiting at most `seconds` for each byte; nil at its end.
    static func readLine(_ handle: FileHandle, seconds: Int32 = 20) throws -> String? {
        var line: [UInt8] = []
        var entry = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while true {
            guard poll(&entry, 1, seconds * 1000) == 1 else { throw POSIXError(.ETIMEDOUT) }
            var byte: UInt8 = 0
            guard read(handle.fileDescriptor, &byte, 1) == 1 else {
                return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Ends child `pid`: SIGTERM, then, if it has not exited within `seconds`, SIGKILL; and reaps
    /// it. Until it is reaped the pid is still the child's, so the signals reach nobody else.
    static func end(_ pid: pid_t, within seconds: Double) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(seconds)
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(20_000)
        }
    }
}
