import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `keychainctl` against a keychain of its own (`XDG_DATA_HOME` in a temporary
/// directory) and a keychaind of its own (`XDG_RUNTIME_DIR` there too), the way a user runs it
/// from a shell. ``cleanUp()`` stops the daemon the test's programs started.
struct CommandRunner {
    let home: URL
    let baseEnvironment: [String: String]
    /// `XDG_RUNTIME_DIR`: where this keychain's daemon listens.
    let runtime: URL

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    init(environment: [String: String] = ProcessInfo.processInfo.environment, runtime: URL? = nil) throws {
        TestLoginSession.ensured
        baseEnvironment = environment
        home = FileManager.default.temporaryDirectory.appendingPathComponent("keychainctl-e2e-\(UUID().uuidString)")
        self.runtime = runtime ?? home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    var keychainDirectory: URL { home.appendingPathComponent("keychain") }

    /// The built binary: beside this package's debug products.
    static let binary: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/"
            && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path)
        {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent(".build/debug/keychainctl")
    }()

    var environment: [String: String] {
        var environment = baseEnvironment
        environment["XDG_DATA_HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        // The keychain's own sheet, whatever pinentry this machine has, unless a test names one.
        environment["KEYCHAIN_PINENTRY"] = baseEnvironment["KEYCHAIN_PINENTRY"] ?? "none"
        return environment
    }

    /// Runs `keychainctl arguments…` with `input` on standard input (a pipe, not a terminal).
    @discardableResult
    func run(_ arguments: [String], input: String = "") throws -> Output {
        let process = try launch(arguments)
        process.stdin.fileHandleForWriting.write(Data(input.utf8))
        try process.stdin.fileHandleForWriting.close()
        return process.finish()
    }

    /// Adds a generic password (`keychainctl add-generic-password -s service -a account
    /// options…`, the secret on standard input): true when it was added.
    func addPassword(_ service: String, account: String, _ options: [String] = [], secret: String) throws -> Bool {
        try run(["add-generic-password", "-s", service, "-a", account] + options, input: secret).status == 0
    }

    /// A program started by ``launch(_:)``: its process and the test's ends of its pipes.
    struct Running {
        let process: SpawnedProgram
        let stdin: ChildPipe
        let stdout: ChildPipe
        let stderr: ChildPipe

        func finish() -> Output {
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            let err = stderr.fileHandleForReading.readDataToEndOfFile()
            return Output(
                status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                stderr: String(decoding: err, as: UTF8.self))
        }
    }

    /// Runs a bash script with this keychain's environment; `$KEYCHAINCTL` is the built binary.
    /// For what `Process` cannot pass: bytes that are not UTF-8, and pipelines.
    func script(_ script: String) throws -> Output {
        var environment = environment
        environment["KEYCHAINCTL"] = Self.binary.path
        let running = try start(
            URL(fileURLWithPath: ChildSpawn.find("bash") ?? "/bin/bash"), ["-c", script], environment)
        try running.stdin.fileHandleForWriting.close()
        return running.finish()
    }

    func launch(_ arguments: [String]) throws -> Running {
        try start(Self.binary, arguments, environment)
    }

    /// Starts `executable` through ``ChildSpawn`` (an empty signal mask, default dispositions, only
    /// its standard descriptors), its standard streams on pipes whose ends close on exec.
    private func start(_ executable: URL, _ arguments: [String], _ environment: [String: String]) throws -> Running {
        let (stdin, stdout, stderr) = (try ChildPipe(), try ChildPipe(), try ChildPipe())
        defer {
            // The child's ends: its copies are its own now, and a reader sees the end of its output.
            try? stdin.fileHandleForReading.close()
            try? stdout.fileHandleForWriting.close()
            try? stderr.fileHandleForWriting.close()
        }
        let process = try SpawnedProgram(
            executable.path, arguments, environment: environment,
            stdio: (
                stdin.fileHandleForReading.fileDescriptor, stdout.fileHandleForWriting.fileDescriptor,
                stderr.fileHandleForWriting.fileDescriptor
            ))
        return Running(process: process, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// A keychain with passcode 1234 and, with `simulator`, the simulated sensor on and a thumb
    /// enrolled: the state most end-to-end tests start from.
    static func withPasscode(simulator: Bool = true, pinentry: String? = nil) throws -> CommandRunner {
        var environment = ProcessInfo.processInfo.environment
        environment["KEYCHAIN_PINENTRY"] = pinentry
        let shell = try CommandRunner(environment: environment)
        // The owner session lets `biometry touch` reach the simulated sensor through keychaind.
        for (arguments, input) in [(["passcode", "set"], "1234\n")]
            + (simulator
                ? [
                    (["biometry", "simulate", "on"], "1234\n"),
                    (["biometry", "enroll", "--finger", "thumb"], "1234\n"), (["owner", "login"], "1234\n"),
                ] : [])
        {
            let result = try shell.run(arguments, input: input)
            guard result.status == 0 else {
                shell.cleanUp()
                throw SetUpFailure(command: arguments, stderr: result.stderr)
            }
        }
        return shell
    }

    /// The running daemon's pid, from its status.
    func daemonPID() throws -> Int32? {
        let status = try run(["daemon", "status"])
        guard let line = status.stdout.split(separator: "\n").first(where: { $0.hasPrefix("pid: ") }) else {
            return nil
        }
        return Int32(line.dropFirst(5))
    }

    /// Stops the daemon (SIGTERM, then SIGKILL by pid if it lingers) and removes the files. The
    /// pid comes from its status, or from `daemon stop`, which finds it from the kernel: a daemon
    /// whose keychain does not open answers no status, and is stopped all the same.
    func cleanUp() {
        let known = try? daemonPID()
        let stopped = try? run(["daemon", "stop"])
        let named = stopped?.stdout.split(separator: " ").dropFirst(2).first.flatMap { Int32($0.dropLast()) }
        for pid in Set([known ?? nil, named].compactMap { $0 }) { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(at: home)
        try? FileManager.default.removeItem(at: runtime)
    }
}

/// A command that sets up a test's keychain failed: what it was and what it printed.
struct SetUpFailure: Error, CustomStringConvertible {
    let command: [String]
    let stderr: String
    var description: String { "`keychainctl \(command.joined(separator: " "))` failed: \(stderr)" }
}

/// A pipe between a test and its child, as Foundation's `Pipe` offers it, whose ends close on
/// exec (``ChildSpawn/pipe()``) so that no other child inherits them.
struct ChildPipe {
    let fileHandleForReading: FileHandle
    let fileHandleForWriting: FileHandle

    init() throws {
        let ends = try ChildSpawn.pipe()
        fileHandleForReading = FileHandle(fileDescriptor: ends.read, closeOnDealloc: true)
        fileHandleForWriting = FileHandle(fileDescriptor: ends.write, closeOnDealloc: true)
    }
}
