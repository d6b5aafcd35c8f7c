import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon with a TPM (`swtpm`, one per "machine"): the device secret is sealed to
/// it and in no file; a copy of the files opens nothing on another machine; a complete older
/// copy put back is refused and audited, where without a TPM it goes unnoticed.
extension SystemModeTests {
    @Test func theDeviceSecretIsSealedToTheTPMAndInNoFile() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let daemon = try SystemDaemonHarness(extraArguments: ["--tpm", tpm.tcti])
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        let added = try daemon.keychainctl(
            as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "sealed secret")
        #expect(added.status == 0, "\(added.stderr)\n\(daemon.daemonLog)")
        let keychain = daemon.state.appendingPathComponent(String(alice.uid))
        #expect(!FileManager.default.fileExists(atPath: keychain.appendingPathComponent("device-secret").path))
        #expect(FileManager.default.fileExists(atPath: keychain.appendingPathComponent("device-secret.tpm").path))
        let status = try daemon.keychainctl(as: alice, ["status"])
        #expect(status.stdout.contains("device secret: sealed to the TPM (\(tpm.tcti))"), "\(status.stdout)")
        #expect(status.stdout.contains("refuses older copies of the files"), "\(status.stdout)")
        #expect(daemon.daemonLog.contains("device secrets: sealed to the TPM \(tpm.tcti)"))

        // A restart unseals it again.
        try daemon.restart()
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout
                == "sealed secret\n")
    }

    @Test func theFilesCopiedToAnotherMachineOpenNothing() throws {
        let (tpm, other) = (try SoftwareTPM(), try SoftwareTPM())
        defer {
            tpm.stop()
            other.stop()
        }
        let daemon = try SystemDaemonHarness(extraArguments: ["--tpm", tpm.tcti])
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "s").status
                == 0)
        daemon.stop()
        // Another machine: its own TPM, and every file of alice's keychain.
        let thief = try SystemDaemonHarness(extraArguments: ["--tpm", other.tcti])
        defer { thief.cleanUp() }
        let copy = thief.state.appendingPathComponent(String(alice.uid)).path
        let source = daemon.state.appendingPathComponent(String(alice.uid)).path
        #expect(system("cp -a '\(source)' '\(copy)'") == 0)
        let found = try thief.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"])
        #expect(found.status != 0 && found.stderr.contains("OSStatus -26275"), "\(found.stderr)")
        #expect(found.stderr.contains("does not unseal on this machine's TPM"), "\(found.stderr)")
        print("the files on another machine, with its own TPM:\n\(found.stderr)")
        #expect(thief.daemonLog.contains("integrity check failed"), "\(thief.daemonLog)")
        // Without any TPM, the file that holds the secret is not there to take.
        thief.stop()
        thief.extraArguments = ["--tpm", "none"]
        try thief.restart()
        let withoutTPM = try thief.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"])
        #expect(withoutTPM.status != 0 && withoutTPM.stderr.contains("is sealed to a TPM"), "\(withoutTPM.stderr)")
        print("the files on another machine, without a TPM:\n\(withoutTPM.stderr)")
    }

    @Test func aCompleteOlderCopyOfTheFilesIsRefusedWithATPMAndNotWithout() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        for (name, arguments) in [("with a TPM", ["--tpm", tpm.tcti]), ("without", ["--tpm", "none"])] {
            let daemon = try SystemDaemonHarness(extraArguments: arguments)
            defer { daemon.cleanUp() }
            let alice = try LocalUser.alice()
            let keychain = daemon.state.appendingPathComponent(String(alice.uid)).path
            let old = daemon.base.appendingPathComponent("older-copy").path
            #expect(
                try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "old", "-a", "me"], input: "o")
                    .status == 0)
            daemon.stop()
            #expect(system("cp -a '\(keychain)' '\(old)'") == 0)
            try daemon.restart()
            #expect(
                try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "new", "-a", "me"], input: "n")
                    .status == 0)
            #expect(try daemon.keychainctl(as: alice, ["delete-generic-password", "-s", "old"]).status == 0)
            daemon.stop()
            // Every file of the keychain, as it was before those commits.
            #expect(system("rm -rf '\(keychain)' && cp -a '\(old)' '\(keychain)'") == 0)
            try daemon.restart()
            let found = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "old", "-w"])
            if name == "with a TPM" {
                #expect(found.status != 0 && found.stderr.contains("OSStatus -26275"), "\(name): \(found.stderr)")
                #expect(found.stderr.contains("older copy"), "\(found.stderr)")
                #expect(daemon.daemonLog.contains("integrity check failed"), "\(daemon.daemonLog)")
                print("an older copy put back, with a TPM:\n\(found.stderr)")
                // The way out the message names besides the files as they were: a new keychain.
                #expect(try daemon.keychainctl(as: alice, ["erase", "--yes"]).status == 0)
                #expect(
                    try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "anew", "-a", "me"], input: "a")
                        .status == 0, "\(daemon.daemonLog)")
            } else {
                // Today's limit without a TPM: the older copy opens, the deleted item with it.
                #expect(found.stdout == "o\n", "\(name): \(found.stdout)\(found.stderr)")
            }
        }
    }

    /// A TPM cleared (in the firmware, or a new motherboard) takes the sealed device secret with
    /// it: the keychain stays shut, says why, and a backup made before brings the items back
    /// into a new one.
    @Test func aClearedTPMLeavesTheKeychainShutAndABackupBringsItBack() throws {
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let daemon = try SystemDaemonHarness(extraArguments: ["--tpm", tpm.tcti])
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        let directory = daemon.base.appendingPathComponent("alice")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        chown(directory.path, alice.uid, alice.gid)
        let file = directory.appendingPathComponent("keychain.backup").path
        for (arguments, input) in [
            (["passcode", "set"], "1234\n"), (["add-generic-password", "-s", "mail", "-a", "me"], "kept"),
            (["owner", "login"], "1234\n"), (["backup", file], "backup password\n"),
        ] {
            let result = try daemon.keychainctl(as: alice, arguments, input: input)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        daemon.stop()
        #expect(system("tpm2_clear -T '\(tpm.tcti)' >/dev/null 2>&1") == 0)
        try daemon.restart()

        let shut = try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"])
        #expect(shut.status != 0 && shut.stderr.contains("this TPM was cleared since"), "\(shut.stderr)")
        let erased = try daemon.keychainctl(as: alice, ["erase", "--yes"])
        #expect(erased.status == 0, "\(erased.stderr)")
        for (arguments, input) in [
            (["passcode", "set"], "1234\n"), (["owner", "login"], "1234\n"), (["restore", file], "backup password\n"),
        ] {
            let result = try daemon.keychainctl(as: alice, arguments, input: input)
            #expect(result.status == 0, "\(arguments): \(result.stderr)\n\(daemon.daemonLog)")
        }
        #expect(try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "mail", "-w"]).stdout == "kept\n")
        let status = try daemon.keychainctl(as: alice, ["status"])
        #expect(status.stdout.contains("device secret: sealed to the TPM"), "\(status.stdout)")
    }

    @Test func withoutATPMTheSecretIsAFileAndStatusSaysSo() throws {
        let daemon = try SystemDaemonHarness(extraArguments: ["--tpm", "auto"])
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password", "-s", "mail", "-a", "me"], input: "s").status
                == 0)
        // `--tpm auto`, the system daemon's default: the machine's TPM, when it has one.
        let hasTPM = access("/dev/tpmrm0", F_OK) == 0
        let keychain = daemon.state.appendingPathComponent(String(alice.uid))
        #expect(
            FileManager.default.fileExists(atPath: keychain.appendingPathComponent("device-secret").path) == !hasTPM)
        let status = try daemon.keychainctl(as: alice, ["status"])
        #expect(
            status.stdout.contains(hasTPM ? "device secret: sealed to the TPM" : "device secret: in a file"),
            "\(status.stdout)")
        #expect(daemon.daemonLog.contains(hasTPM ? "device secrets: sealed" : "device secrets: in files"))
    }
}
