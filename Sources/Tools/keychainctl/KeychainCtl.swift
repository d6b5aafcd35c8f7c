import ArgumentParser
import Foundation
import Keychain

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl`: the device owner's command-line tool for the keychain, in the manner of
/// Apple's `security`.
@main
struct KeychainCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychainctl",
        abstract: "Manage the keychain: passwords, passcode, lock state.",
        discussion:
            "Secrets are read from standard input, or from a hidden prompt on a terminal; never from arguments. Exit "
            + "status: 0 on success, 44 when an item is not found, 64 for a usage error, 1 for other failures. Before "
            + "the command, `--system-socket PATH` talks to a system keychaind listening there instead of "
            + "/run/keychain/socket (the socket and its process must belong to the keychaind user).",
        version: "keychainctl 0.1.0 (swift-keychain; keybag format 2, database schema 1)",
        subcommands: [
            Status.self, Lock.self, Unlock.self, Passcode.self,
            AddGenericPassword.self, FindGenericPassword.self, DeleteGenericPassword.self,
            AddInternetPassword.self, FindInternetPassword.self, DeleteInternetPassword.self,
            DumpKeychain.self, Biometry.self, Authenticate.self, Erase.self, Daemon.self, Owner.self, Apps.self,
            SSH.self, SSHAgentCommand.self, PromptAgent.self, Import.self, PAM.self, Backup.self, Restore.self,
            Sync.self,
        ])

    /// Refuses arguments that are not UTF-8 before parsing: Swift would replace the bad bytes
    /// with U+FFFD, and `-s $'\xfe'` would then find the item stored under `-s $'\xff'`.
    static func main() {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index], String(validatingCString: argument) != nil else {
                StandardError.write(
                    "keychainctl: error: argument \(index) is not valid UTF-8; attributes are UTF-8 text, and a "
                        + "damaged one could match another item\n"
                )
                Glibc.exit(64)
            }
        }
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == KeychainCommand.systemSocketOption {
            guard arguments.count >= 2 else {
                StandardError.write(
                    "keychainctl: error: \(KeychainCommand.systemSocketOption) needs the socket's path\n")
                Glibc.exit(64)
            }
            arguments.removeFirst(2)
        }
        if let lookup = GenericPasswordLookup(plainArguments: arguments) { lookup.runAndExit() }
        if let first = arguments.first, !first.hasPrefix("-"), let hint = unknownCommandHint(first) {
            StandardError.write(
                "keychainctl: error: unknown command '\(first)'\(hint)\nkeychainctl: hint: `keychainctl --help` "
                    + "lists the commands\n"
            )
            Glibc.exit(64)
        }
        main(arguments)
    }

    /// Nil when `name` is a command; otherwise "; did you mean 'X'?" for the closest command
    /// (at most a third of its letters off), or "".
    static func unknownCommandHint(_ name: String) -> String? {
        let commands = configuration.subcommands.map { $0.configuration.commandName ?? $0._commandName } + ["help"]
        guard !commands.contains(name) else { return nil }
        let ranked = commands.map { ($0, editDistance($0, name)) }.min { $0.1 < $1.1 }
        guard let (closest, distance) = ranked, distance <= max(2, closest.count / 3) else { return "" }
        return "; did you mean '\(closest)'?"
    }

    /// Levenshtein distance.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
