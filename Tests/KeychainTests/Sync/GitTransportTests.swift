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

    /// The attack of issue 52: a remote whose `circle/list` is a link to a file of the keychain's
    /// (`../../keybag` from the old clone's work tree) had the next publish of the list written
    /// through the link, over that file. Nothing of the remote's tree is ever put on disk now.
    @Test func aLinkOnTheRemoteNamesNoFileThePublishWrites() throws {
        defer { try? FileManager.default.removeItem(at: base) }
        let victim = base.appendingPathComponent("keybag")
        try Data("the keybag".utf8).write(to: victim)
        try pushFromHostileClone { hostile in
            try FileManager.default.createDirectory(
                at: hostile.appendingPathComponent("circle"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: hostile.appendingPathComponent("circle/list").path, withDestinationPath: "../../keybag")
        }
        let laptop = machine("laptop")
        let snapshot = try laptop.fetch()
        #expect(snapshot.files.isEmpty)
        guard case .published = try laptop.publish(["circle/list": [9, 9]], over: snapshot.token) else {
            throw KeychainError.errSecInternalComponent
        }
        #expect(try Data(contentsOf: victim) == Data("the keybag".utf8))
        #expect(try machine("desktop").fetch().files == ["circle/list": [9, 9]])
        // And nothing the remote named is in the keychain's repository: it is bare.
        let kept = try FileManager.default.contentsOfDirectory(atPath: base.appendingPathComponent("laptop").path)
        #expect(!kept.contains("circle") && kept.contains("HEAD"), "\(kept)")
    }

    /// A remote naming a transport that runs a command (`ext::`) or reads a descriptor of
    /// keychaind's (`fd::0`, which held a sync for the whole timeout) is refused by git at once.
    @Test func onlyTheTransportsOfTheAllowListAreUsed() throws {
        defer { try? FileManager.default.removeItem(at: base) }
        let marker = base.appendingPathComponent("ran")
        for remote in ["ext::sh -c touch% \(marker.path)", "fd::0", "fd::7,8"] {
            let started = Date()
            let transport = GitTransport(remote: remote, directory: base.appendingPathComponent("m-\(UUID())"))
            #expect(throws: KeychainError.errSecIO, "\(remote)") { _ = try transport.fetch() }
            #expect(Date().timeIntervalSince(started) < 10, "\(remote)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker.path))
        #expect(GitTransport.isLocal("/srv/circle.git") && GitTransport.isLocal("file:///srv/circle.git"))
        #expect(!GitTransport.isLocal("me@host:circle.git") && !GitTransport.isLocal("ssh://host/c.git"))
        #expect(!GitTransport.isLocal("ext::sh -c x"))
    }

    /// Pushes to the remote, from a clone with a work tree, what `change` puts in that tree.
    private func pushFromHostileClone(_ change: (URL) throws -> Void) throws {
        let hostile = base.appendingPathComponent("hostile-\(UUID())")
        #expect(try Self.git.run(["clone", "-q", remote, hostile.path], in: base).status == 0)
        try change(hostile)
        for arguments in [
            ["add", "-A"], ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "x"],
            ["push", "-q", "origin", "HEAD:refs/heads/main"],
        ] {
            #expect(try Self.git.run(arguments, in: hostile).status == 0, "\(arguments)")
        }
    }

    @Test func whatTheRemoteHoldsIsReadAsHostile() throws {
        defer { try? FileManager.default.removeItem(at: base) }
        // Someone with write access to the remote puts links to a file and a directory of this
        // machine there.
        try pushFromHostileClone { hostile in
            try FileManager.default.createSymbolicLink(
                atPath: hostile.appendingPathComponent("leak").path, withDestinationPath: "/etc/passwd")
            try FileManager.default.createSymbolicLink(
                atPath: hostile.appendingPathComponent("devices").path, withDestinationPath: "/etc")
            try Data([1]).write(to: hostile.appendingPathComponent("record"))
            try FileManager.default.createDirectory(
                at: hostile.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try Data([2]).write(to: hostile.appendingPathComponent("sub/..x"))
        }
        #expect(try machine("laptop").fetch().files == ["record": [1], "sub/..x": [2]])
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
