import ArgumentParser
import Foundation
import Keychain
import KeychainSupport

/// `keychainctl pam …`: what the PAM module (`pam_keychain.so`, Docs/PAM.md) runs, as the user
/// who logs in, at the start and end of a login and at a password change. The module never
/// links Swift: it starts this program with the password on standard input and writes what it
/// says to the system log. Each command succeeds when the keychain could not be reached or
/// was left as it was (it says why): a login never fails because of the keychain.
struct PAM: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pam",
        abstract: "What the PAM module pam_keychain.so runs at login, logout and password change (Docs/PAM.md).",
        subcommands: [OpenSession.self, CloseSession.self, ChangePasscode.self])

    /// The options every command of the module takes.
    struct LoginOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The process that opened the login: its pid and start time (field 22 of /proc/PID/stat).",
                valueName: "pid:start"))
        var login: LoginProcess?

        @Flag(help: "Start this user's keychaind when it is not running (the module's auto_start).")
        var startDaemon = false

        /// False, after saying why, when the per-user keychaind is not running and may not be
        /// started; the system daemon is always there to ask.
        func keychainIsReachable() throws -> Bool {
            guard !startDaemon, KeychainCommand.systemDaemonSocket == nil else { return true }
            let running: Bool
            do throws(KeychainError) {
                running = try DaemonControl.status(starting: false) != nil
            } catch {
                KeychainCommand.printError(error)
                throw ExitCode(1)
            }
            if !running {
                KeychainCommand.note(
                    "keychaind is not running, so the keychain was left as it is (auto_start starts it)")
            }
            return running
        }
    }

    /// A process named by its pid and its start time.
    struct LoginProcess: ExpressibleByArgument {
        let reference: ProcessReference

        init?(argument: String) {
            let parts = argument.split(separator: ":")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, let start = UInt64(parts[1]) else { return nil }
            reference = ProcessReference(pid: pid, startTime: start)
        }
    }

    struct OpenSession: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open-session",
            abstract: "Count the login, and unlock with the login password (one line on standard input).",
            discussion: """
                The password is tried only when the keychain is locked, has a passcode, and has no failed passcode \
                attempt on record: a login password that is not the passcode is counted as one failed attempt, \
                once, never at every login. Without a password, --fingerprint asks keychaind to verify a finger \
                itself.
                """)

        @OptionGroup var options: LoginOptions
        @Flag(help: "The login password comes as one line on standard input.") var passwordOnStdin = false
        @Flag(help: "Without a password, unlock with a fingerprint keychaind verifies itself (fprintd).")
        var fingerprint = false

        func run() throws {
            // Read first, so that the module's write never meets a closed pipe.
            let password = passwordOnStdin ? try SecretInput.line(prompt: "Login password: ") : nil
            guard try options.keychainIsReachable() else { return }
            try KeychainCommand.run {
                if let login = options.login?.reference {
                    _ = try ProcessKeychain.perform(.openLoginSession(login))
                }
                let status = try KeychainDevice.status()
                guard status.passcodeSet, !status.isUnlocked else {
                    KeychainCommand.note(status.passcodeSet ? "the keychain is unlocked" : "no passcode is set")
                    return
                }
                if let password {
                    try PAM.tryOnce(
                        status, { () throws(KeychainError) in try KeychainDevice.unlock(passcode: password) },
                        skipped: "left locked: the login password is not tried; unlock once with the passcode "
                            + "(keychainctl unlock)",
                        succeeded: "unlocked with the login password",
                        wrong: "the login password is not the keychain's passcode: left locked")
                } else if fingerprint {
                    try TouchWait.untilMatch { .unlockByBiometry(timeout: $0) }
                    KeychainCommand.note("unlocked with a fingerprint")
                } else {
                    KeychainCommand.note(
                        "no password came with this login (a key, a fingerprint, autologin): left locked")
                }
            }
        }
    }

    struct CloseSession: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "close-session", abstract: "Forget the login; lock the keychain when it was the last.")

        @OptionGroup var options: LoginOptions
        @Flag(help: "Leave the keychain unlocked when the last login ends.") var keepUnlocked = false

        func run() throws {
            guard let login = options.login?.reference else {
                throw ValidationError("close-session needs --login PID:START, the process that opened the login")
            }
            guard try options.keychainIsReachable() else { return }
            try KeychainCommand.run {
                guard
                    case .count(let left) = try ProcessKeychain.perform(
                        .closeLoginSession(login, lockWhenLast: !keepUnlocked))
                else { throw KeychainError(.errSecInternalComponent, "the keychain answered with something else") }
                KeychainCommand.note(
                    left > 0
                        ? "\(left) other login(s) of this user remain open: the keychain stays as it is"
                        : keepUnlocked
                            ? "the last login ended (keep_unlocked: not locked)" : "the last login ended: locked"
                )
            }
        }
    }

    struct ChangePasscode: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change-passcode",
            abstract: "Change the passcode from the old login password to the new (two lines on standard input).",
            discussion: """
                A keychain without a passcode, or with a failed passcode attempt on record, is left as it is. An old \
                login password that is not the passcode counts as one failed attempt, and the passcode stays.
                """)

        @OptionGroup var options: LoginOptions

        func run() throws {
            let old = try SecretInput.line(prompt: "Old login password: ")
            let new = try SecretInput.line(prompt: "New login password: ")
            guard try options.keychainIsReachable() else { return }
            try KeychainCommand.run {
                let status = try KeychainDevice.status()
                guard status.passcodeSet else {
                    KeychainCommand.note("no passcode is set: the keychain was left as it is")
                    return
                }
                try PAM.tryOnce(
                    status, { () throws(KeychainError) in try KeychainDevice.setPasscode(current: old, new: new) },
                    skipped: "the old login password is not tried: the passcode was left as it is",
                    succeeded: "the keychain's passcode is now the new login password",
                    wrong: "the old login password is not the keychain's passcode: the passcode was left as it is")
            }
        }
    }

    /// Tries a login password as the passcode (`attempt`) the module's way: not while a failed
    /// passcode attempt is on record, so that a login password that is not the passcode costs one
    /// failed attempt, never one per login, and never walks the keychain towards "erase after 10
    /// failed attempts". Says what happened; a wrong password is said, not thrown.
    static func tryOnce(
        _ status: DeviceStatus, _ attempt: () throws(KeychainError) -> Void, skipped: String, succeeded: String,
        wrong: String
    ) throws {
        guard status.failedAttempts == 0, status.secondsUntilNextAttempt == 0 else {
            KeychainCommand.note("\(status.failedAttempts) failed passcode attempt(s) are on record: \(skipped)")
            tell(
                "Your keychain stays locked: a failed passcode attempt is on record, so your login password was "
                    + "not tried. Unlock it with `keychainctl unlock`.")
            return
        }
        do throws(KeychainError) {
            try attempt()
            KeychainCommand.note(succeeded)
        } catch {
            guard error.status == KeychainError.errSecAuthFailed.status else { throw error }
            KeychainCommand.note(
                "\(wrong) (one failed attempt counted; it is not tried again until the passcode unlocks the keychain)")
            tell(
                "Your keychain stays locked: your login password is not its passcode. Unlock it with "
                    + "`keychainctl unlock`.")
        }
    }

    /// One line for the person logging in, which the PAM module says through the login's
    /// conversation (`pam_info`) as well as logging it: the module passes on the lines that
    /// start with `keychainctl: tell: `.
    static func tell(_ line: String) {
        KeychainCommand.note("tell: \(line)")
    }
}
