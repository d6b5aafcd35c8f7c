import Foundation
import KeychainProtocol
import Testing

@testable import KeychainSync

/// The git transport (Docs/Sync.md, "The remote"), between two clones of a bare repository on
/// this machine: what one publishes the other fetches; a publish over a state the remote moved
/// on from is `.moved`, and writes nothing; what the remote holds is read as hostile.
@Suite struct GitTransportTests {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("kc-git-\(UUID().uuidString)")
    var remote: String { base.appendingPathComponent("remote.git").path }
    static let git = GitCommand(executable: "/usr/bin/git", environment: ["PATH": "/usr/bin:/bin"])

    init() throws {
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        #expect(try Self.git.run(["init", "-q", "--bare", "-b", "main", "remote.git"], in: base).status == 0)
    }

    func machine(_ name: String) -> GitTransport {
        GitTransport(remote: remote, directory: base.appendingPathComponent(name))
    }

    @Test func whatOneMachinePublishesTheOtherFetchesAndAStalePublishIsMoved() throws {
        defer { try? FileManager.default.removeItem(at: base) }
        let (laptop, desktop) = (machine("laptop"), machine("desktop"))
        #expect(try laptop.fetch() == SyncSnapshot(files: [:], token: ""))
        guard
            case .published(let first) = try laptop.publish(
                ["circle/list": [1, 2, 3], "devices/aa/head": [4]], over: "")
        else { throw KeychainError.errSecInternalComponent }
        let fetched = try desktop.fetch()
        #expect(fetched == SyncSnapshot(files: ["circle/list": [1, 2, 3], "devices/aa/head": [4]], token: first))

        guard case .published(let second) = try desktop.publish(["devices/bb/head": [5]], over: first) else {
            throw KeychainError.errSecInternalComponent
        }
        // The laptop publishes over the state it had: the remote moved on, nothing is written.
        #expect(try laptop.publish(["devices/aa/head": [6]], over: first) == .moved)
        let again = try laptop.fetch()
        #expect(again.token == second && again.files["devices/aa/head"] == [4])
        guard case .published = try laptop.publish(["devices/aa/head": [6], "circle/list": nil], over: second)
        else { throw KeychainError.errSecInternalComponent }
        #expect(
            try desktop.fetch().files == ["devices/aa/head": [6], "devices/bb/head": [5]])
        // So does a machine that has fetched nothing, publishing over nothing.
        #expect(try machine("server").publish(["devices/cc/head": [7]], over: "") == .moved)
    }

    @Test func whatTheRemoteHoldsIsReadAsHostile() throws {
        defer { try? FileManager.default.removeItem(at: base) }
        // Someone with write access to the remote puts links to a file and a directory of this
        // machine there.
        let hostile = base.appendingPathComponent("hostile")
        #expect(try Self.git.run(["clone", "-q", remote, hostile.path], in: base).status == 0)
        try FileManager.default.createSymbolicLink(
            atPath: hostile.appendingPathComponent("leak").path, withDestinationPath: "/etc/passwd")
        try FileManager.default.createSymbolicLink(
            atPath: hostile.appendingPathComponent("devices").path, withDestinationPath: "/etc")
        try Data([1]).write(to: hostile.appendingPathComponent("record"))
        for arguments in [
            ["add", "-A"], ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "x"],
            ["push", "-q", "origin", "HEAD:refs/heads/main"],
        ] {
            #expect(try Self.git.run(arguments, in: hostile).status == 0, "\(arguments)")
        }
        #expect(try machine("laptop").fetch().files == ["record": [1]])
        for path in ["../outside", "/etc/passwd", ".git/config", "a//b", ""] {
            #expect(throws: KeychainError.errSecParam, "\(path)") {
                _ = try machine("laptop").publish([path: [1]], over: "")
            }
        }
        let unreachable = GitTransport(
            remote: base.appendingPathComponent("none.git").path, directory: base.appendingPathComponent("lost"))
        #expect(throws: KeychainError.errSecIO) { _ = try unreachable.fetch() }
        // A token in the remote's URL is in no message.
        #expect(GitTransport.shown("https://me:s3cr3t@host/x.git") == "https://me@host/x.git")
        #expect(GitTransport.shown("git@host:me/x.git") == "git@host:me/x.git")
        let withToken = GitTransport(
            remote: "https://me:s3cr3t@127.0.0.1:1/x.git", directory: base.appendingPathComponent("token"))
        do {
            _ = try withToken.fetch()
            Issue.record("a fetch from a closed port succeeded")
        } catch {
            #expect(!error.message.contains("s3cr3t") && error.message.contains("me@127.0.0.1"), "\(error.message)")
        }
    }
}
