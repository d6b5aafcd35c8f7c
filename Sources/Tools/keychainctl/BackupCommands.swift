import ArgumentParser
import Foundation
import Keychain

/// `keychainctl backup FILE`: an encrypted backup, as iOS makes one (Docs/Backup.md).
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an encrypted backup of the keychain to a file (needs an owner session, unlocked).",
        discussion:
            "Items that may migrate go in under a key derived from the backup password; ThisDeviceOnly items and "
            + "items with an access control go in sealed to this device, and come back only here; "
            + "WhenPasscodeSetThisDeviceOnly items, Enclave keys and items under an app's password stay out. "
            + "The password is asked twice on a terminal, or read as the first line of standard input.")

    @Argument(help: ArgumentHelp("The backup file to write (replaced once the new one is whole).", valueName: "file"))
    var file: String

    func run() throws {
        try KeychainCommand.run {
            let password = try SecretInput.newSecret(
                prompt: "Backup password: ", confirm: "Confirm backup password: ", named: "backup passwords")
            let bar = ProgressBar("backing up")
            let summary = try KeychainDevice.backup(to: URL(fileURLWithPath: file), password: password) {
                bar.show(items: $0.items, fraction: $0.fraction)
            }
            bar.end()
            print(
                """
                backed up to \(file): \(summary.migratable) items for any device, \(summary.thisDeviceOnly) for this \
                device only; \(summary.leftOut) left out (WhenPasscodeSetThisDeviceOnly items, Enclave keys, items \
                under an app's password)
                """)
        }
    }
}

/// `keychainctl restore FILE`: puts a backup's items into the keychain.
struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore the items of an encrypted backup into the keychain (needs an owner session, unlocked).",
        discussion:
            "An item the keychain holds already (same primary key) is replaced when the backup's copy is newer "
            + "(its modification date), and kept otherwise; --replace puts the backup's copy in either way. "
            + "Nothing is changed unless the whole file is authentic. The password is asked on a terminal, or read "
            + "as the first line of standard input.")

    @Argument(help: ArgumentHelp("The backup file.", valueName: "file")) var file: String
    @Flag(help: "Replace the items the keychain holds with the backup's copies, even newer ones.")
    var replace = false

    func run() throws {
        try KeychainCommand.run {
            let password = try SecretInput.line(prompt: "Backup password: ")
            let bar = ProgressBar("restoring")
            let report = try KeychainDevice.restore(
                from: URL(fileURLWithPath: file), password: password, replacing: replace
            ) { bar.show(items: $0.items, fraction: $0.fraction) }
            bar.end()
            var lines = [
                "restored from \(file): \(report.added) added, \(report.replaced) replaced, \(report.kept) kept "
                    + "(the keychain's copy was as new or newer)"
            ]
            if report.fromAnotherDevice > 0 {
                lines.append(
                    "\(report.fromAnotherDevice) items were sealed to the device that made the backup, which is not "
                        + "this one: they stay behind")
            }
            print(lines.joined(separator: "\n"))
        }
    }
}
