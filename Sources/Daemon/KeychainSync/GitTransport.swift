import Foundation
import KeychainProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The circle's files in a git repository the person already has (Docs/Sync.md, "The remote"):
/// a bare repository of the keychain's, its scratch directory, where `fetch` is `git fetch` and a
/// read of the remote's branch through git's plumbing, and `publish` a commit made by
/// `git fast-import` over the state fetched and a push, which git refuses when the remote moved
/// on (a non-fast-forward push): that is `.moved`.
///
/// What the remote holds is hostile, so nothing of it is ever checked out: no file is written
/// where the remote's tree says (a link there named a file of the keychain's once). Only regular
/// files are read, each at most ``maximumFile`` bytes, under paths of plain names (``GitOutput``).
/// git runs with a fixed environment (no system or global configuration, no prompt, no hooks), a
/// timeout, and a protocol allow-list: `ssh`, `https` and `git` for a network remote, `file` for
/// a path (the only kind it can name); `ext::`, `fd::` and every other transport are refused.
public final class GitTransport: SyncTransport {
    /// The remote, as git names it: a URL, `user@host:path`, or a path.
    public let remote: String
    private let directory: URL
    private let git: GitCommand
    /// One git operation at a time in the repository.
    private let inUse = Mutex(())
    /// The branch the circle's files are on.
    static let branch = "main"
    /// The branch of this repository that a publish commits to before pushing it.
    static let publishing = "refs/heads/publish"
    /// What git says when a push lost a race: the remote's branch is no longer the commit the
    /// push was made over (checked by git, or by the remote's ref lock when two pushes land at
    /// once).
    static let movedOn = ["[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref"]
    /// How keychaind runs git, set once as it starts: its own executable and
    /// `--confined-exec`, which confines git with Landlock to the repository before git starts
    /// (``init(remote:directory:privateRoot:gitExecutable:environment:)``); nil (tests, an
    /// embedded keychain) runs git unconfined.
    public static let confiningLauncher = Mutex<[String]?>(nil)
    /// The largest file read: a record's largest bucket, and room.
    static let maximumFile = (4 << 20) + 4096
    /// The most a snapshot reads in all: the sync state's bound (64 MiB) many times over.
    static let maximumSnapshot = 512 << 20

    /// A transport to `remote` keeping its repository in `directory` (created, mode 0700),
    /// running `gitExecutable` in `environment` (add `HOME` and `SSH_AUTH_SOCK` for an ssh
    /// remote); any git configuration or prompt variable in it is replaced. With a
    /// ``confiningLauncher`` and `privateRoot` (the keychain's directory, or every user's in the
    /// system daemon), git can write only in `directory` and read nothing else beneath
    /// `privateRoot` (Landlock, where the kernel has it).
    public init(
        remote: String, directory: URL, privateRoot: URL? = nil, gitExecutable: String = "/usr/bin/git",
        environment: [String: String] = ["PATH": "/usr/bin:/bin"]
    ) {
        self.remote = remote
        self.directory = directory
        var environment = environment.filter { !$0.key.hasPrefix("GIT_") }
        // Never a prompt: keychaind has no terminal to answer it on.
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
        environment["GIT_ALLOW_PROTOCOL"] = Self.isLocal(remote) ? "file" : "ssh:https:git"
        environment["GIT_PROTOCOL_FROM_USER"] = "0"
        environment["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o ConnectTimeout=15"
        git = GitCommand(
            executable: gitExecutable, environment: environment,
            confinement: privateRoot.flatMap { root in Self.confiningLauncher.withLock { $0 }.map { ($0, root.path) } })
    }

    /// True for a remote git reaches as a path of this machine: no URL scheme and no
    /// `host:path` (a colon before any slash).
    public static func isLocal(_ remote: String) -> Bool {
        if remote.contains("://") { return remote.lowercased().hasPrefix("file://") }
        guard let colon = remote.firstIndex(of: ":") else { return true }
        return remote[..<colon].contains("/")
    }

    /// Options on every command: no hooks, no object or ref a remote could have git run, and
    /// HTTP that gives up on a stalled connection.
    private static let options = [
        "--git-dir=.", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never",
        "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=20", "-c", "transfer.fsckObjects=true",
        "-c", "submodule.recurse=false",
    ]

    public func fetch() throws(KeychainError) -> SyncSnapshot {
        try inUse.withLock { _ throws(KeychainError) in
            try prepare()
            try run(["fetch", "-q", "--no-tags", "origin"], "fetch from \(Self.shown(remote))", timeout: GitCommand.networkTimeout)
            let head = try git.run(
                Self.options + ["rev-parse", "-q", "--verify", "refs/remotes/origin/\(Self.branch)^{commit}"], in: directory)
            guard head.status == 0 else { return SyncSnapshot(files: [:], token: "") }
            let token = head.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard GitOutput.isObjectName(token) else {
                throw KeychainError(.errSecDecode, "git named the remote's state \(token.prefix(80))")
            }
            return SyncSnapshot(files: try readFiles(token), token: token)
        }
    }

    public func publish(_ changes: [String: [UInt8]?], over token: String) throws(KeychainError) -> PublishOutcome {
        for path in changes.keys { try Self.check(path) }
        guard token.isEmpty || GitOutput.isObjectName(token) else {
            throw KeychainError(.errSecParam, "\(token.prefix(80)) names no state of the remote")
        }
        return try inUse.withLock { _ throws(KeychainError) in
            try prepare()
            try run(["fast-import", "--quiet", "--force", "--done", "--date-format=now"], "commit the changes", input: Self.commit(changes, over: token))
            let pushed = try git.run(
                Self.options + ["push", "-q", "--no-verify", "origin", "\(Self.publishing):refs/heads/\(Self.branch)"],
                in: directory, timeout: GitCommand.networkTimeout)
            guard pushed.status == 0 else {
                if Self.movedOn.contains(where: pushed.text.contains) { return .moved }
                throw KeychainError(.errSecIO, redacted("cannot push to \(remote): \(pushed.text)"))
            }
            let head = try git.run(Self.options + ["rev-parse", Self.publishing], in: directory)
            return .published(head.text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// A `git fast-import` stream of one commit on ``publishing``: `changes` over the tree of
    /// `token` (over nothing when empty).
    static func commit(_ changes: [String: [UInt8]?], over token: String) -> [UInt8] {
        var stream = Array("reset \(publishing)\ncommit \(publishing)\n".utf8)
        stream += Array("committer swift-keychain <keychain@localhost> now\ndata 4\nsync\n".utf8)
        if !token.isEmpty { stream += Array("from \(token)\n".utf8) }
        for (path, bytes) in changes.sorted(by: { $0.key < $1.key }) {
            if let bytes {
                stream += Array("M 100644 inline \(path)\ndata \(bytes.count)\n".utf8)
                stream += bytes
                stream.append(10)
            } else {
                stream += Array("D \(path)\n".utf8)
            }
        }
        stream += Array("\ndone\n".utf8)
        return stream
    }

    /// Makes the repository once: a bare one (0700) with no hooks, whose `origin` is the remote
    /// and fetches its one branch. A clone with a work tree, as versions before this one kept
    /// here, is removed first.
    private func prepare() throws(KeychainError) {
        var info = stat()
        if lstat(directory.appendingPathComponent("HEAD").path, &info) == 0 { return }
        try? FileManager.default.removeItem(at: directory)
        guard mkdir(directory.path, 0o700) == 0 else {
            throw KeychainError(.errSecIO, "cannot make \(directory.path): \(String(cString: strerror(errno)))")
        }
        try run(["init", "-q", "--bare", "--template=", "-b", Self.branch], "make the repository in \(directory.path)")
        try run(["remote", "add", "origin", remote], "name the remote")
        // The one branch, and no error when the remote has none yet (a pattern may match nothing).
        try run(
            ["config", "remote.origin.fetch", "+refs/heads/\(Self.branch)*:refs/remotes/origin/\(Self.branch)*"],
            "name the remote's branch")
    }

    /// Every regular file of the state `token` names, by path, through git's plumbing.
    private func readFiles(_ token: String) throws(KeychainError) -> [String: [UInt8]] {
        let listing = try git.run(Self.options + ["ls-tree", "-r", "-z", "-l", "--full-tree", token], in: directory)
        guard listing.status == 0 else {
            throw KeychainError(.errSecDecode, redacted("git cannot list the remote's files: \(listing.text)"))
        }
        let entries = try GitOutput.treeEntries(
            listing.bytes, maximumFile: Self.maximumFile, maximumTotal: Self.maximumSnapshot)
        guard !entries.isEmpty else { return [:] }
        let names = Array(entries.map { $0.object + "\n" }.joined().utf8)
        let contents = try git.run(Self.options + ["cat-file", "--batch"], in: directory, input: names)
        guard contents.status == 0 else {
            throw KeychainError(.errSecDecode, redacted("git cannot read the remote's files: \(contents.text)"))
        }
        return try GitOutput.blobs(contents.bytes, for: entries)
    }

    /// A path the circle writes: plain names, separated by slashes, never git's own.
    static func check(_ path: String) throws(KeychainError) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), parts[0] != ".git"
        else { throw KeychainError(.errSecParam, "\(path) is not a path of the circle's files") }
    }

    private func run(
        _ arguments: [String], _ what: String, input: [UInt8]? = nil, timeout: Double = GitCommand.localTimeout
    ) throws(KeychainError) {
        let output = try git.run(Self.options + arguments, in: directory, input: input, timeout: timeout)
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
