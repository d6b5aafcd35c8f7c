import ArgumentParser
import Foundation
import Keychain
import SecretService

/// `keychainctl secret-service`: the Secret Service on this user's session bus.
struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Serve the freedesktop Secret Service (org.freedesktop.secrets) from the keychain.",
        discussion: """
            Serves the Secret Service API on this user's session bus, so that the programs that \
            keep passwords there (browsers, git's libsecret helper, Python's keyring, secret-tool) \
            keep them in the keychain. Each program sees, reads and changes the items it stored, and \
            no other's: keychaind identifies the process behind every call. Runs until the bus \
            closes; the D-Bus activation file and the systemd user unit start it on demand.
            """)

    @Flag(help: "Take the name from the provider that has it (gnome-keyring lets it go).")
    var replace = false

    func run() throws {
        let provider: SecretServiceProvider
        do {
            provider = try SecretServiceProvider(replacing: replace)
        } catch {
            StandardError.write("keychainctl: error: \(error)\n")
            throw ExitCode(1)
        }
        provider.run()
    }
}
