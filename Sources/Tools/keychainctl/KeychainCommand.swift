import ArgumentParser
import Foundation
import Keychain
import KeychainEmbedded
import KeychainSupport

/// Runs a command body against the keychain and turns a ``KeychainError`` into the tool's
/// contract: `keychainctl: error: …` and `keychainctl: hint: …` on stderr, exit 44 for
/// errSecItemNotFound (as Apple's `security`), 1 otherwise.
enum KeychainCommand {
    /// The access group items added by `keychainctl` go to.
    static let accessGroup = "keychainctl"

    /// The option, given before the command, that names a system daemon's socket.
    static let systemSocketOption = "--system-socket"

    /// The system daemon's socket named by `--system-socket PATH` before the command; nil for
    /// the usual choice (the system daemon at its fixed path when installed, else the user's).
    static let systemSocket: String? = {
        let arguments = CommandLine.arguments
        return arguments.count > 2 && arguments[1] == systemSocketOption ? arguments[2] : nil
    }()

    /// The system daemon's socket this run talks to, if any: the one named, or the installed one.
    static var systemDaemonSocket: String? {
        systemSocket ?? (SystemDaemon.isInstalled ? KeychainPaths.systemSocket : nil)
    }

    /// - Parameter handlesSecrets: false for the commands that only start, stop or look at the
    ///   daemon: they neither connect first nor harden the process.
    static func run(handlesSecrets: Bool = true, _ body: () throws -> Void) throws {
        try run(hardening: handlesSecrets ? .beforeBody : .none) { _ in try body() }
    }

    /// Runs `body`, whose first request carries and returns no secret (a lookup's question
    /// whether one item matches or several), with one round trip fewer. Through keychaind, the
    /// reply to that request shows the daemon has identified this process (it does so as it
    /// accepts the connection), and `body` calls the closure it is given right then, which
    /// hardens the process (``ProcessHardening``) before any secret comes. Embedded, where
    /// opening the keychain brings keys into the process, the process hardens before `body` and
    /// the closure does nothing.
    static func runIdentifiedByFirstRequest(_ body: (_ firstReplyCame: () -> Void) throws -> Void) throws {
        try run(hardening: .afterFirstReply, body)
    }

    /// When a command makes itself undumpable.
    private enum Hardening {
        case none, beforeBody, afterFirstReply
    }

    private static func run(hardening: Hardening, _ body: (_ firstReplyCame: () -> Void) throws -> Void) throws {
        do {
            // Through keychaind, keychainctl is an app like any other: its own items only.
            let transport: any KeychainTransport =
                ProcessKeychain.usesDaemon
                ? systemSocket.map { DaemonTransport(systemSocket: $0) } ?? DaemonTransport()
                : EmbeddedTransport(accessGroups: [accessGroup], actsForOwner: true)
            ProcessKeychain.transport = transport
            let daemon = transport as? DaemonTransport
            if hardening == .beforeBody || (hardening == .afterFirstReply && daemon == nil) {
                // The per-user daemon identifies this process before it becomes undumpable,
                // which it could not do afterwards; no secret has been read yet.
                try daemon?.identifyThisProcess()
                ProcessHardening.apply()
            }
            try body { if hardening == .afterFirstReply && daemon != nil { ProcessHardening.apply() } }
        } catch let error as KeychainError {
            printError(error)
            throw ExitCode(error.status == KeychainError.errSecItemNotFound.status ? 44 : 1)
        }
    }

    static func printError(_ error: KeychainError) {
        var line =
            "keychainctl: error: \(error.message) (\(KeychainError.name(of: error.status)), OSStatus \(error.status))\n"
        if let hint = hint(for: error) { line += "keychainctl: hint: \(hint)\n" }
        StandardError.write(line)
    }

    private static func hint(for error: KeychainError) -> String? {
        if error.requiredAuthentication != nil && error.status == KeychainError.errSecInteractionNotAllowed.status {
            // Not the lock state: the item needs the owner, and there was no terminal to ask on.
            return
                "the item needs the device owner to authenticate, and the sheet is drawn on the controlling "
                + "terminal (/dev/tty); run the command from a terminal (its output may still go to a pipe)"
        }
        return switch error.status {
        case KeychainError.errSecInteractionNotAllowed.status:
            "run `keychainctl status` to see the lock state and any passcode delay"
        case KeychainError.errSecDuplicateItem.status: "add -U to update the existing item instead"
        case KeychainError.errSecMissingEntitlement.status:
            "through keychaind this needs an owner session: `keychainctl owner login` (the passcode), then run it again"
        // A wrong passcode says itself how many attempts count and what delay follows; a bad
        // file, code or password counts none, and erasing the keychain mends no file of them:
        // no hint is better than a false one.
        default: nil
        }
    }

    /// Asks `question` on the terminal unless `yes`; without a terminal, only `yes` confirms.
    ///
    /// - Throws: `errSecUserCanceled` when the answer is not yes, `errSecParam` with `refusal`
    ///   when there is no terminal to ask and no `--yes`.
    static func confirm(_ question: String, yes: Bool, refusal: String) throws {
        if yes { return }
        guard SecretInput.isTerminal else { throw KeychainError(.errSecParam, refusal) }
        StandardError.write("\(question) [y/N] ")
        let answer = Swift.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else { throw KeychainError(.errSecUserCanceled, "nothing was changed") }
    }

    /// Prints a message on stderr.
    static func note(_ message: String) {
        StandardError.write("keychainctl: \(message)\n")
    }
}
