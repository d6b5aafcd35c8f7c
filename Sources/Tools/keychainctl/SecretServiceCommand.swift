import ArgumentParser
import Foundation
import Keychain
import SecretService

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl secret-service`: the Secret Service on this user's session bus.
struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Serve the freedesktop Secret Service (org.freedesktop.secrets) from the keychain.",
        discussion: """
            Serves the Secret Service API on this user's session bus, so that the programs that \
            keep passwords there (browsers, git's libsecret helper, Python's keyring, secret-tool) \
            keep them in the keychain. Each program sees, reads and changes the items it stored, and \
            no other's: keychaind identifies the process behind every call. `install` makes the \
            session bus start it on demand.
            """,
        subcommands: [Serve.self, Install.self, Uninstall.self], defaultSubcommand: Serve.self)

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the Secret Service until the session bus closes (the default).")

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

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Have the session bus start the Secret Service on demand.",
            discussion: """
                Writes a D-Bus activation file and a systemd user unit for this user, which take \
                precedence over gnome-keyring's. With --system (as root, after `daemon install \
                --system`), for every user of the system daemon.
                """)

        @Flag(help: "For every user of the system daemon (as root).")
        var system = false

        func run() throws {
            if system && geteuid() != 0 {
                StandardError.write(
                    "keychainctl: error: installing for every user writes to /usr/local and /etc: run it as root\n")
                throw ExitCode(1)
            }
            let install = system ? SecretServiceInstall.system : SecretServiceInstall.perUser()
            do {
                print(try install.install())
                // The running session bus reads the new file now, not at the next login.
                if !system && SecretServiceProvider.reloadSessionBus() { print("the session bus reloaded its files") }
            } catch let error as KeychainError {
                StandardError.write("keychainctl: error: \(error.message)\n")
                throw ExitCode(1)
            }
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove what `install` wrote.")

        @Flag(help: "For every user of the system daemon (as root).")
        var system = false

        func run() {
            print((system ? SecretServiceInstall.system : SecretServiceInstall.perUser()).uninstall())
        }
    }
}
