import ArgumentParser
import Keychain

/// `keychainctl`: the device owner's command-line tool for the keychain, in the manner of
/// Apple's `security`.
@main
struct KeychainCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychainctl",
        abstract: "Manage the keychain: passwords, passcode, lock state.",
        discussion: "Secrets are read from standard input, or from a hidden prompt on a terminal; never from arguments. Exit status: 0 on success, 44 when an item is not found, 1 for other failures.",
        subcommands: [
            Status.self, Lock.self, Unlock.self, Passcode.self,
            AddGenericPassword.self, FindGenericPassword.self, DeleteGenericPassword.self,
            AddInternetPassword.self, FindInternetPassword.self, DeleteInternetPassword.self,
            DumpKeychain.self, Biometry.self, Authenticate.self,
        ])
}
