import ArgumentParser
import Foundation
import KeychainProtocol
import SecretService

#if canImport(Glibc)
import Glibc
#endif

/// `keychain-secret-service`: the Secret Service on this user's session bus, and its
/// installation. A program of its own, not a command of keychainctl: libdbus, which it links,
/// would otherwise load at every start of every `keychainctl` lookup.
@main
struct KeychainSecretService: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain-secret-service",
        abstract: "Serve the freedesktop Secret Service (org.freedesktop.secrets) from the keychain.",
        discussion: """
            Serves the Secret Service API on this user's session bus, so that the programs that \
            keep passwords there (browsers, git's libsecret helper, Python's keyring, secret-tool) \
            keep them in the keychain. Each program sees, reads and changes the items it stored; \
            another's it reads only once you allow it. `install` makes the session bus start it on \
            demand.
            """,
        version: "keychain-secret-service 0.1.0 (swift-keychain; Secret Service API 0.2)",
        subcommands: [Serve.self, Install.self, Uninstall.self, Import.self], defaultSubcommand: Serve.self)

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the Secret Service until the session bus closes (the default).")

        @Flag(help: "Take the name from the provider that has it (gnome-keyring lets it go).")
        var replace = false

        @Option(
            help: ArgumentHelp(
                "The system daemon's socket, where it is not at its usual path.", valueName: "path"))
        var systemSocket: String?

        func run() throws {
            let provider: SecretServiceProvider
            do {
                provider = try SecretServiceProvider(replacing: replace, systemSocket: systemSocket)
            } catch {
                fail("\(error)")
            }
            provider.run()
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Have the session bus start the Secret Service on demand.",
            discussion: """
                Writes a D-Bus activation file and a systemd user unit for this user, which take \
                precedence over gnome-keyring's. With --system (as root, after `keychainctl daemon \
                install --system`), for every user of the system daemon: the program is copied to \
                /usr/local/libexec and registered as the Secret Service bridge.
                """)

        @Flag(help: "For every user of the system daemon (as root).")
        var system = false

        @Option(
            name: .customLong("package-root"),
            help: ArgumentHelp(
                "Write the files a distribution package ships beneath this directory, and nothing else.",
                visibility: .private))
        var packageRoot: String?

        func run() throws {
            if let packageRoot {
                do throws(KeychainError) {
                    for path in try SecretServiceInstall.writePackageFiles(beneath: packageRoot) { print(path) }
                } catch {
                    fail(error.message)
                }
                return
            }
            if system && geteuid() != 0 {
                fail("installing for every user writes to /usr/local and /etc: run it as root")
            }
            do throws(KeychainError) {
                print(try (system ? SecretServiceInstall.system : SecretServiceInstall.perUser()).install())
            } catch {
                fail(error.message)
            }
            // The running session bus reads the new file now, not at the next login.
            if !system && SecretServiceProvider.reloadSessionBus() { print("the session bus reloaded its files") }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every item of the provider you had (gnome-keyring, KeePassXC) into the keychain.",
            discussion: """
                Run it while the old provider serves org.freedesktop.secrets, before switching. \
                Labels, attributes and dates come along; nothing is deleted from the old provider, \
                and a second run adds nothing twice. The items belong to you until an app asks for \
                one and you allow it.
                """)

        func run() throws {
            do throws(SecretServiceImport.Failure) {
                let outcome = try SecretServiceImport().run()
                let items = outcome.imported == 1 ? "item" : "items"
                let before = outcome.alreadyThere == 1 ? "was" : "were"
                print(
                    "imported \(outcome.imported) \(items) from \(outcome.provider)"
                        + (outcome.alreadyThere > 0 ? "; \(outcome.alreadyThere) \(before) imported before" : ""))
            } catch {
                fail(error.description)
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

/// Says `message` on standard error and exits with status 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("keychain-secret-service: error: \(message)\n".utf8))
    exit(1)
}
