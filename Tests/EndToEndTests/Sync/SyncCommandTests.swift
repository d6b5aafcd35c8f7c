import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Three machines (three keychains, each with its own device secret and its own keychaind) and a
/// bare repository served by `git daemon` on loopback: `keychainctl sync` as a person runs it.
@Suite(.serialized) struct SyncCommandTests {
    /// A circle of machines on one remote; ``end()`` stops every daemon.
    final class Circle {
        let remote: GitDaemon
        var machines: [String: CommandRunner] = [:]

        init(_ names: [String]) throws {
            remote = try GitDaemon()
            do {
                for name in names {
                    let machine = try CommandRunner.withPasscode(simulator: false)
                    machines[name] = machine
                    let login = try machine.run(["owner", "login"], input: "1234\n")
                    guard login.status == 0 else {
                        throw SetUpFailure(command: ["owner", "login"], stderr: login.stderr)
                    }
                }
                let first = try self[names[0]].run(["sync", "setup", remote.url, "--name", names[0]])
                guard first.status == 0 else { throw SetUpFailure(command: ["sync", "setup"], stderr: first.stderr) }
                for name in names.dropFirst() { try join(name, approvedBy: names[0]) }
            } catch {
                end()
                throw error
            }
        }

        subscript(name: String) -> CommandRunner { machines[name]! }

        /// `name` asks to join; `member` approves it with the code `name` shows next to it; `name`
        /// confirms the code.
        func join(_ name: String, approvedBy member: String) throws {
            let asked = try self[name].run(["sync", "join", remote.url, "--name", name])
            guard asked.status == 0,
                let line = asked.stdout.split(separator: "\n").first(where: { $0.hasPrefix("  \(member) ") }),
                let code = line.split(separator: " ").last.map(String.init)
            else { throw SetUpFailure(command: ["sync", "join"], stderr: asked.stderr + asked.stdout) }
            let approved = try self[member].run(["sync", "approve", code])
            guard approved.status == 0 else {
                throw SetUpFailure(command: ["sync", "approve"], stderr: approved.stderr)
            }
            let confirmed = try self[name].run(["sync", "join", "--code", code])
            guard confirmed.status == 0 else {
                throw SetUpFailure(command: ["sync", "join", "--code"], stderr: confirmed.stderr)
            }
        }

        /// `sync now` on each machine in turn, `rounds` times.
        func syncAll(rounds: Int = 2) throws {
            for _ in 0..<rounds {
                for name in machines.keys.sorted() {
                    let synced = try self[name].run(["sync", "now"])
                    #expect(synced.status == 0, "\(name): \(synced.stderr)")
                }
            }
        }

        func secret(_ service: String, on name: String) throws -> String? {
            let found = try self[name].run(["find-generic-password", "-s", service, "-w"])
            return found.status == 0 ? String(found.stdout.dropLast()) : nil
        }

        func end() {
            for machine in machines.values { machine.cleanUp() }
            remote.stop()
        }
    }

    @Test func anItemAddedOnOneAppearsOnTheOthersAndOnlySynchronizableOnes() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        let laptop = circle["laptop"]
        #expect(try laptop.addPassword("mail", account: "me", ["--synchronizable"], secret: "mail secret"))
        #expect(try laptop.addPassword("local", account: "me", secret: "stays here"))
        let synced = try laptop.run(["sync", "now"])
        #expect(synced.status == 0 && synced.stdout.contains("published 1"), "\(synced.stdout)\(synced.stderr)")
        try circle.syncAll(rounds: 1)
        for name in ["desktop", "server"] {
            #expect(try circle.secret("mail", on: name) == "mail secret", "\(name)")
            #expect(try circle.secret("local", on: name) == nil, "\(name)")
        }
        let devices = try circle["server"].run(["sync", "devices"])
        #expect(devices.stdout.split(separator: "\n").count == 3, "\(devices.stdout)")
        #expect(devices.stdout.contains("server  (this machine)"), "\(devices.stdout)")

        // The remote holds no secret, no attribute and no name in the clear.
        let files = try circle.remote.files()
        #expect(files.keys.filter { $0.hasPrefix("devices/") }.count == 4, "\(files.keys.sorted())")
        for (path, bytes) in files {
            for clear in ["mail secret", "mail", "stays here"] {
                #expect(bytes.range(of: Data(clear.utf8)) == nil, "\(path) holds \(clear)")
            }
        }
    }

    @Test func concurrentChangesConvergeToTheLaterOneAndADeleteReachesEveryMachine() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        #expect(try circle["laptop"].addPassword("vpn", account: "me", ["--synchronizable"], secret: "first"))
        try circle.syncAll(rounds: 1)
        // Two machines change the item between syncs: the desktop's change is the later one.
        #expect(
            try circle["laptop"].addPassword("vpn", account: "me", ["--synchronizable", "-U"], secret: "laptop's"))
        usleep(50_000)
        #expect(
            try circle["desktop"].addPassword("vpn", account: "me", ["--synchronizable", "-U"], secret: "desktop's"))
        // The laptop publishes first; the desktop's later change still wins everywhere.
        try circle.syncAll(rounds: 2)
        for name in ["laptop", "desktop", "server"] {
            #expect(try circle.secret("vpn", on: name) == "desktop's", "\(name)")
        }

        #expect(try circle["server"].run(["delete-generic-password", "-s", "vpn"]).status == 0)
        try circle.syncAll(rounds: 2)
        for name in ["laptop", "desktop", "server"] {
            #expect(try circle.secret("vpn", on: name) == nil, "\(name)")
        }
    }

    @Test func aRemovedDeviceReadsNothingWrittenAfter() throws {
        let circle = try Circle(["laptop", "desktop", "server"])
        defer { circle.end() }
        #expect(try circle["laptop"].addPassword("before", account: "me", ["--synchronizable"], secret: "old"))
        try circle.syncAll(rounds: 1)
        #expect(try circle.secret("before", on: "server") == "old")

        let devices = try circle["laptop"].run(["sync", "devices"]).stdout
        let server = try #require(
            devices.split(separator: "\n").first { $0.contains("  server") }?.split(separator: " ").first)
        let removed = try circle["laptop"].run(["sync", "remove-device", String(server.prefix(8))])
        #expect(removed.status == 0 && removed.stdout.contains("epoch 2"), "\(removed.stdout)\(removed.stderr)")
        #expect(try circle["laptop"].addPassword("after", account: "me", ["--synchronizable"], secret: "new"))
        #expect(try circle["laptop"].run(["sync", "now"]).status == 0)
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("after", on: "desktop") == "new")

        let locked = try circle["server"].run(["sync", "now"])
        #expect(locked.status != 0 && locked.stderr.contains("removed from the circle"), "\(locked.stderr)")
        #expect(try circle.secret("after", on: "server") == nil)
        #expect(try circle.secret("before", on: "server") == "old", "what it had stays")
        // What the remote holds now is sealed under a key the removed device was never given.
        let wraps = try FileManager.default.subpathsOfDirectory(atPath: circle.remote.repository.path)
        #expect(!wraps.isEmpty)
    }
}
