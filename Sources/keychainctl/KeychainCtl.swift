#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
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
            DumpKeychain.self, Biometry.self, Authenticate.self, Erase.self,
        ])

    /// Refuses arguments that are not UTF-8 before parsing: Swift would replace the bad bytes
    /// with U+FFFD, and `-s $'\xfe'` would then find the item stored under `-s $'\xff'`.
    static func main() {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], String(validatingCString: argument) != nil else {
                FileHandle.standardError.write(Data("keychainctl: error: argument \(index) is not valid UTF-8; attributes are UTF-8 text, and a damaged one could match another item\n".utf8))
                Glibc.exit(64)
            }
        }
        main(nil)
    }
}
