import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare repository served by `git daemon` on a free loopback port, pushes allowed: the
/// remote a circle of test machines syncs over, as a host someone else keeps would serve it.
/// ``stop()`` ends the daemon by its pid and removes the repository.
final class GitDaemon {
    let directory: URL
    let port: UInt16
    private var pid: pid_t = 0

    /// The remote's URL, as `keychainctl sync setup` takes it.
    var url: String { "git://127.0.0.1:\(port)/circle.git" }
    /// The bare repository on disk, for a test that plays the host.
    var repository: URL { directory.appendingPathComponent("circle.git") }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/kc-gitd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        let made = try SpawnedProgram(
            "/usr/bin/git",
            ["init", "-q", "--bare", "-b", "main", directory.appendingPathComponent("circle.git").path],
            environment: Self.environment)
        guard made.terminationStatus == 0 else { throw POSIXError(.EIO) }
        port = try SoftwareTPM.freePorts()
        pid = try ChildSpawn.spawn(
            "/usr/bin/git",
            [
                "daemon", "--reuseaddr", "--listen=127.0.0.1", "--port=\(port)",
                "--base-path=\(directory.path)", "--export-all", "--enable=receive-pack", directory.path,
            ], environment: Self.environment, stdio: (nil, nil, nil))
        let deadline = Date().addingTimeInterval(10)
        while !SoftwareTPM.accepts(port) {
            guard Date() < deadline else {
                stop()
                throw POSIXError(.ETIMEDOUT)
            }
            usleep(20_000)
        }
    }

    static let environment = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"]

    /// Runs git in a work tree of the remote's `main` (a fresh clone in `scratch`), then pushes
    /// what `change` did to it, as the host or anyone with write access could.
    func tamper(_ change: (URL) throws -> Void) throws {
        let scratch = directory.appendingPathComponent("tamper-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try git(["clone", "-q", repository.path, scratch.path], in: directory)
        try change(scratch)
        try git(["add", "-A"], in: scratch)
        try git(["-c", "user.name=host", "-c", "user.email=host@x", "commit", "-q", "-m", "tamper"], in: scratch)
        try git(["push", "-q", "-f", "origin", "HEAD:refs/heads/main"], in: scratch)
    }

    /// The commit the remote's `main` is at.
    func head() throws -> String {
        let arguments = ["rev-parse", "main"]
        let run = try SpawnedProgram(
            "/usr/bin/git", ["-C", repository.path] + arguments, environment: Self.environment, capturingOutput: true)
        let output = String(decoding: run.readOutputToEnd(), as: UTF8.self)
        guard run.terminationStatus == 0 else { throw GitFailure(arguments: arguments, output: output) }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Puts the remote's `main` back at `commit`, as a host rolling the repository back would.
    func reset(to commit: String) throws {
        try git(["update-ref", "refs/heads/main", commit], in: repository)
    }

    /// Every file of the remote's `main`, by path, as a clone checks them out.
    func files() throws -> [String: Data] {
        let scratch = directory.appendingPathComponent("read-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try git(["clone", "-q", repository.path, scratch.path], in: directory)
        var files: [String: Data] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: scratch.path)
        where !path.hasPrefix(".git") {
            var isDirectory: ObjCBool = false
            let url = scratch.appendingPathComponent(path)
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files[path] = try Data(contentsOf: url)
        }
        return files
    }

    /// Runs git in `directory`; throws, with what git said, when it fails.
    func git(_ arguments: [String], in directory: URL) throws {
        let run = try SpawnedProgram(
            "/usr/bin/git", ["-C", directory.path] + arguments, environment: Self.environment, capturingOutput: true,
            capturingErrors: true)
        let output = String(decoding: run.readOutputToEnd(), as: UTF8.self)
        guard run.terminationStatus == 0 else { throw GitFailure(arguments: arguments, output: output) }
    }

    /// Ends the daemon (SIGTERM, then SIGKILL) and removes the repository.
    func stop() {
        if pid > 0 {
            ChildSpawn.end(pid, within: 5)
            pid = 0
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A git command of a test's remote that failed, with what git printed: which step of a test's
/// play of the host failed, and why (a ref another push held locked, say).
struct GitFailure: Error, CustomStringConvertible {
    let arguments: [String]
    let output: String
    var description: String { "`git \(arguments.joined(separator: " "))` failed: \(output)" }
}
