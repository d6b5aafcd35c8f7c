import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension SystemModeTests {
    /// A user of the system daemon backs up the keychain it keeps for them, out of their reach,
    /// into a file of theirs, and restores it; the audit log records both.
    @Test func aUserBacksUpAndRestoresTheKeychainTheSystemDaemonKeeps() throws {
        let daemon = try SystemDaemonHarness()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        let directory = URL(fileURLWithPath: "/tmp/kc-backup-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        chown(directory.path, alice.uid, alice.gid)
        chmod(directory.path, 0o700)
        let file = directory.appendingPathComponent("keychain.backup").path

        #expect(try daemon.keychainctl(as: alice, ["passcode", "set"], input: "1234\n").status == 0)
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "kept")
                .status == 0)
        #expect(try daemon.keychainctl(as: alice, ["owner", "login"], input: "1234\n").status == 0)
        let made = try daemon.keychainctl(as: alice, ["backup", file], input: "backup password\n")
        #expect(made.status == 0, "\(made.stderr)\n\(daemon.daemonLog)")
        var info = stat()
        #expect(stat(file, &info) == 0 && info.st_uid == alice.uid)

        #expect(try daemon.keychainctl(as: alice, ["delete-generic-password", "-s", "mail"]).status == 0)
        let restored = try daemon.keychainctl(as: alice, ["restore", file], input: "backup password\n")
        #expect(restored.stdout.contains("1 added"), "\(restored.stdout)\(restored.stderr)")
        #expect(try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout == "kept\n")
        #expect(daemon.daemonLog.contains("backup made"), "\(daemon.daemonLog)")
        #expect(daemon.daemonLog.contains("backup restored"), "\(daemon.daemonLog)")
    }
}
