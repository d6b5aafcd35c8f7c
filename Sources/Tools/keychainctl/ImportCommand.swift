import ArgumentParser
import Foundation
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl import --from-secret-service`: the items of the Secret Service provider the
/// user had, copied in by `keychain-secret-service import`, which this runs in its place
/// (`execv`): the import speaks D-Bus, and libdbus stays out of keychainctl, which every
/// lookup starts.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy another store's items into the keychain.",
        discussion: """
            --from-secret-service: every item of the provider that serves org.freedesktop.secrets \
            now (gnome-keyring, KeePassXC), with its label, attributes and dates, through \
            keychain-secret-service. Run it before switching to the keychain's Secret Service; \
            nothing is deleted from the old provider, and a second run adds nothing twice.
            """)

    @Flag(help: "From the Secret Service provider on this session bus.")
    var fromSecretService = false

    func validate() throws {
        guard fromSecretService else {
            throw ValidationError("name what to import from: --from-secret-service")
        }
    }

    func run() throws {
        let beside = URL(fileURLWithPath: InstalledFiles.runningProgram).deletingLastPathComponent()
            .appendingPathComponent("keychain-secret-service").path
        let installed = "/usr/local/libexec/keychain-secret-service"
        guard let program = [beside, installed].first(where: { (path: String) in access(path, X_OK) == 0 }) else {
            StandardError.write(
                "keychainctl: error: keychain-secret-service, which imports, is neither beside keychainctl nor in "
                    + "/usr/local/libexec\n")
            throw ExitCode(1)
        }
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup("import"), nil]
        execv(program, arguments)
        StandardError.write("keychainctl: error: cannot run \(program): \(String(cString: strerror(errno)))\n")
        throw ExitCode(1)
    }
}
