import Foundation
import KeychainProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The circle's files in a git repository the person already has (Docs/Sync.md, "The remote"):
/// a clone of it in a directory of the keychain's; `fetch` is `git fetch` and a read of the
/// remote's branch, `publish` a commit over the state fetched and a push, which git refuses
/// when the remote moved on (a non-fast-forward push): that is `.moved`.
///
/// What the remote holds is hostile: only regular files are read (never a link git checked
/// out), each at most ``maximumFile`` bytes, under paths of plain names.
public final class GitTransport: SyncTransport {
    /// The remote, as git names it: a URL, `user@host:path`, or a path.
    public let remote: String
    private let directory: URL
    private let git: GitCommand
    /// One git operation at a time in the clone.
    private let inUse = Mutex(())
    /// The branch the circle's files are on.
    static let branch = "main"
    /// What git says when a push lost a race: the remote's branch is no longer the commit the
    /// push was made over (checked by git, or by the remote's ref lock when two pushes land at
    /// once).
    static let movedOn = ["[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref"]
    /// The largest file read: a record's largest bucket, and room.
    static let maximumFile = 1 << 20

    /// A transport to `remote` keeping its clone in `directory` (created, mode 0700), running
    /// `gitExecutable` in `environment` (add `HOME` and `SSH_AUTH_SOCK` for an ssh remote).
    public init(
        remote: String, directory: URL, gitExecutable: String = "/usr/bin/git",
        environment: [String: String] = ["PATH": "/usr/bin:/bin"]
    ) {
        self.remote = remote
        self.directory = directory
        var environment = environment
        // Never a prompt: keychaind has no terminal to answer it on.
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        git = GitCommand(executable: gitExecutable, environment: environment)
    }

    public func fetch() throws(KeychainError) -> SyncSnapshot {
        try inUse.withLock { _ throws(KeychainError) in
            try prepare()
            try run(["fetch", "-q", "origin"], "fetch from \(Self.shown(remote))")
            let head = try git.run(
                ["rev-parse", "-q", "--verify", "refs/remotes/origin/\(Self.branch)"], in: directory)
            guard head.status == 0 else { return SyncSnapshot(files: [:], token: "") }
            let token = head.text.trimmingCharacters(in: .whitespacesAndNewlines)
            try checkOut(token)
            return SyncSnapshot(files: try readFiles(), token: token)
        }
    }

    public func publish(_ changes: [String: [UInt8]?], over token: String) throws(KeychainError) -> PublishOutcome {
        try inUse.withLock { _ throws(KeychainError) in
            try prepare()
            try checkOut(token)
            for (path, bytes) in changes {
                try Self.check(path)
                let url = directory.appendingPathComponent(path)
                if let bytes {
                    do {
                        try FileManager.default.createDirectory(
                            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                        try Data(bytes).write(to: url)
                    } catch {
                        throw KeychainError(.errSecIO, "cannot write \(url.path): \(error.localizedDescription)")
                    }
                } else {
                    try? FileManager.default.removeItem(at: url)
                }
            }
            try run(["add", "-A"], "stage the changes")
            try run(
                [
                    "-c", "user.name=swift-keychain", "-c", "user.email=keychain@localhost", "commit", "-q",
                    "--allow-empty",
                    "-m", "sync",
                ], "commit the changes")
            let pushed = try git.run(["push", "-q", "origin", "HEAD:refs/heads/\(Self.branch)"], in: directory)
            guard pushed.status == 0 else {
                if Self.movedOn.contains(where: pushed.text.contains) { return .moved }
                throw KeychainError(.errSecIO, redacted("cannot push to \(remote): \(pushed.text)"))
            }
            let head = try git.run(["rev-parse", "HEAD"], in: directory)
            return .published(head.text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Makes the clone once: an empty repository (0700) whose `origin` is the remote.
    private func prepare() throws(KeychainError) {
        guard !FileManager.default.fileExists(atPath: directory.appendingPathComponent(".git").path) else { return }
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
            throw KeychainError(.errSecIO, "cannot make \(directory.path): \(String(cString: strerror(errno)))")
        }
        try run(["init", "-q", "-b", Self.branch], "make the clone in \(directory.path)")
        try run(["remote", "add", "origin", remote], "name the remote")
    }

    /// Puts the clone's files as the state `token` names; an empty token, as nothing.
    private func checkOut(_ token: String) throws(KeychainError) {
        if token.isEmpty {
            try run(["checkout", "-q", "-f", "--orphan", "publish-\(UUID().uuidString)"], "start from nothing")
            try run(["rm", "-rfq", "--ignore-unmatch", "."], "start from nothing")
        } else {
            try run(["checkout", "-q", "-f", "--detach", token], "check out \(token)")
        }
        try run(["clean", "-qfdx"], "clean the clone")
    }

    /// Every regular file of the clone but git's own, by path.
    private func readFiles() throws(KeychainError) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let root = directory.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
        while let path = walker.nextObject() as? String {
            if path == ".git" {
                walker.skipDescendants()
                continue
            }
            var info = stat()
            guard lstat(root + "/" + path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            guard Int(info.st_size) <= Self.maximumFile else {
                throw KeychainError(.errSecDecode, "\(path) on the remote is larger than any file of the circle")
            }
            let descriptor = open(root + "/" + path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
            guard read(descriptor, &bytes, bytes.count) == bytes.count else { continue }
            files[path] = bytes
        }
        return files
    }

    /// A path the circle writes: plain names, separated by slashes, never git's own.
    static func check(_ path: String) throws(KeychainError) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), parts[0] != ".git"
        else { throw KeychainError(.errSecParam, "\(path) is not a path of the circle's files") }
    }

    private func run(_ arguments: [String], _ what: String) throws(KeychainError) {
        let output = try git.run(arguments, in: directory)
        guard output.status == 0 else {
            throw KeychainError(.errSecIO, redacted("git could not \(what): \(output.text)"))
        }
    }

    /// `remote` as messages and logs show it: without the password or token a URL can carry
    /// (`https://me:token@host/…` is `https://me@host/…`).
    public static func shown(_ remote: String) -> String {
        guard let password = password(in: remote) else { return remote }
        return remote.replacingOccurrences(of: ":" + password + "@", with: "@")
    }

    /// The password or token in a URL's user part, if it has one.
    private static func password(in remote: String) -> String? {
        guard let scheme = remote.range(of: "://"),
            let at = remote[scheme.upperBound...].firstIndex(of: "@")
        else { return nil }
        let user = remote[scheme.upperBound..<at]
        guard !user.contains("/"), let colon = user.firstIndex(of: ":") else { return nil }
        let password = user[user.index(after: colon)...]
        return password.isEmpty ? nil : String(password)
    }

    /// `text` (git's output, a message naming the remote) with the remote's password, wherever
    /// git put it, replaced.
    private func redacted(_ text: String) -> String {
        guard let password = Self.password(in: remote) else { return text }
        return text.replacingOccurrences(of: password, with: "***")
    }
}
