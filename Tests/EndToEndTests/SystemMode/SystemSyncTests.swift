import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension SystemModeTests {
    /// The keychain the system daemon keeps for a user syncs with the user's keychain on another
    /// machine (a per-user keychaind of its own) over `git daemon` on loopback: keychaind runs
    /// git as its own user, its clone in the user's keychain directory, out of the user's reach.
    @Test func theSystemDaemonsKeychainSyncsWithAnotherMachine() throws {
        let remote = try GitDaemon()
        defer { remote.stop() }
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        for (arguments, input) in [(["passcode", "set"], "1234\n"), (["owner", "login"], "1234\n")] {
            #expect(try daemon.keychainctl(as: alice, arguments, input: input).status == 0, "\(arguments)")
        }
        // A path of this machine would be read and written by keychaind as its own user, who
        // reaches every user's keychain directory: refused.
        for local in [remote.repository.path, "file://" + remote.repository.path] {
            let refused = try daemon.keychainctl(as: alice, ["sync", "setup", local])
            #expect(refused.status != 0 && refused.stderr.contains("network remote only"), "\(refused.stderr)")
        }
        for (arguments, input) in [
            (["add-generic-password", "-s", "mail", "-a", "me", "--synchronizable"], "from the server"),
            (["sync", "setup", remote.url, "--name", "server"], ""),
        ] {
            let run = try daemon.keychainctl(as: alice, arguments, input: input)
            #expect(run.status == 0, "\(arguments): \(run.stderr)\n\(daemon.daemonLog)")
        }
        let laptop = try CommandRunner.withPasscode(simulator: false)
        defer { laptop.cleanUp() }
        #expect(try laptop.run(["owner", "login"], input: "1234\n").status == 0)
        let asked = try laptop.run(["sync", "join", remote.url, "--name", "laptop"])
        #expect(asked.status == 0, "\(asked.stderr)")
        let answered = try daemon.keychainctl(as: alice, ["sync", "approve"])
        #expect(answered.status == 0, "\(answered.stderr)")
        let shown = try laptop.run(["sync", "join"])
        let code = try #require(SyncJoinCode.shown(shown.stdout), "\(shown.stdout)\(shown.stderr)")
        let approved = try daemon.keychainctl(as: alice, ["sync", "approve", code])
        #expect(approved.status == 0, "\(approved.stderr)")
        let joined = try laptop.run(["sync", "join", "--code", code])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(try laptop.run(["find-generic-password", "-s", "mail", "-w"]).stdout == "from the server\n")

        #expect(try laptop.addPassword("wifi", account: "home", ["--synchronizable"], secret: "from the laptop"))
        #expect(try laptop.run(["sync", "now"]).status == 0)
        #expect(try daemon.keychainctl(as: alice, ["sync", "now"]).status == 0)
        let found = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "wifi", "-w"])
        #expect(found.stdout == "from the laptop\n", "\(found.stderr)")
        #expect(daemon.daemonLog.contains("sync"), "\(daemon.daemonLog)")
    }
}
