import ArgumentParser
import Foundation
import Keychain
import KeychainEmbedded
import KeychainPrompt

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show whether a passcode is set, the lock state, and failed attempts.")

    func run() throws {
        try KeychainCommand.run {
            let status = try KeychainDevice.status()
            let state: String
            if !status.passcodeSet {
                state = "unlocked (no passcode is set, so the keychain cannot lock)"
            } else if status.isUnlocked {
                state = "unlocked"
            } else if status.unlockedClasses.contains(.afterFirstUnlock) {
                state = "locked (AfterFirstUnlock items remain available)"
            } else {
                state = "locked (not unlocked since the machine started)"
            }
            let wait =
                status.secondsUntilNextAttempt > 0
                ? "in \(Int(status.secondsUntilNextAttempt.rounded(.up))) seconds" : "now"
            var biometryLine = ""
            do {
                if case .biometry(let biometry) = try ProcessKeychain.perform(.biometryStatus),
                    biometry.sensor == .simulated
                {
                    print(
                        "WARNING: THE SIMULATED FINGERPRINT SENSOR IS ON. Anyone who can run `keychainctl biometry "
                            + "touch` as you can pass biometric checks. Turn it off: keychainctl biometry simulate off"
                    )
                }
            } catch let error as KeychainError {
                // A damaged biometry state makes biometry unavailable; it does not hide the rest.
                biometryLine = "\nbiometry: unavailable (\(error.message))"
            }
            // Who draws the sheets: keychaind says; an embedded keychain draws them itself.
            var sheets = SheetProgram.configuredForTerminal.description
            if ProcessKeychain.usesDaemon, case .daemon(let daemon)? = try? ProcessKeychain.perform(.daemonStatus) {
                sheets = daemon.sheets
            }
            let directory = EmbeddedTransport.defaultDirectory()
            let exists = FileManager.default.fileExists(atPath: directory.appendingPathComponent("keybag").path)
            let place =
                KeychainCommand.systemDaemonSocket.map {
                    "kept by the system keychain daemon (\($0)), out of your reach"
                }
                ?? "\(directory.path)\(exists ? "" : " (none yet: it is created by the first item or passcode)")"
            var secret = "in a file of mode 0600 beside the keychain (no TPM): a copy of the files opens elsewhere"
            if case .keychainProtection(let protection)? = try? ProcessKeychain.perform(.keychainProtection),
                let tpm = protection.sealedBy
            {
                let counter =
                    protection.counterIndex.map { index in
                        "; its counter (NV index 0x\(String(index, radix: 16)), at "
                            + "\(protection.counterValue.map(String.init) ?? "?")) refuses older copies of the files"
                    } ?? ""
                secret = "sealed to the TPM (\(tpm)): the files open on this machine only\(counter)"
            }
            print(
                """
                passcode: \(status.passcodeSet ? "set" : "not set")
                state: \(state)
                failed passcode attempts: \(status.failedAttempts)
                next passcode attempt allowed: \(wait)
                erase after 10 failed attempts: \(status.eraseAfterFailedAttempts ? "on" : "off")
                keychain: \(place)
                device secret: \(secret)
                sheets: \(sheets)\(biometryLine)
                """)
            if let stopped = status.syncStopped { print("sync: STOPPED: \(stopped)") }
        }
    }
}

struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lock the keychain: WhenUnlocked items become unavailable.")

    func run() throws {
        try KeychainCommand.run {
            guard try KeychainDevice.status().passcodeSet else {
                KeychainCommand.note(
                    "no passcode is set, so the keychain cannot lock; set one with `keychainctl passcode set`")
                return
            }
            try KeychainDevice.lock()
        }
    }
}

struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock the keychain with the passcode (the keychain's own sheet, or standard input).",
        discussion:
            "On a terminal the keychain draws its sheet and reads the passcode itself: it never enters keychainctl. "
            + "A passcode piped on standard input is read by keychainctl and sent, for scripts.")

    func run() throws {
        try KeychainCommand.run {
            if SecretInput.isTerminal {
                try KeychainDevice.unlock(reason: "To unlock your keychain")
            } else {
                try KeychainDevice.unlock(passcode: try SecretInput.line(prompt: "Passcode: "))
            }
        }
    }
}

struct Passcode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set, change or remove the device passcode.",
        discussion:
            "Passcodes come one per line on standard input (current first where needed, then the new one), or from "
            + "hidden prompts on a terminal.",
        subcommands: [Set.self, Change.self, Remove.self, EraseAfterFailures.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a passcode when none is set.")
        func run() throws {
            try KeychainCommand.run { try KeychainDevice.setPasscode(current: nil, new: try SecretInput.newPasscode()) }
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change the passcode (current, then new).")
        func run() throws {
            try KeychainCommand.run {
                let current = try SecretInput.line(prompt: "Current passcode: ")
                try KeychainDevice.setPasscode(current: current, new: try SecretInput.newPasscode())
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the passcode; deletes every WhenPasscodeSetThisDeviceOnly item.",
            discussion:
                "Says how many items go first, and asks for confirmation on a terminal; without one, --yes confirms.")
        @Flag(help: "Confirm deleting the items that need the passcode, without asking.") var yes = false

        func run() throws {
            try KeychainCommand.run {
                let doomed = try KeychainDevice.itemCount(accessibility: .whenPasscodeSetThisDeviceOnly)
                if doomed > 0 {
                    KeychainCommand.note(
                        "removing the passcode deletes \(doomed) item\(doomed == 1 ? "" : "s") that can exist only "
                            + "while a passcode is set (WhenPasscodeSetThisDeviceOnly)"
                    )
                    try KeychainCommand.confirm(
                        "Delete them and remove the passcode?", yes: yes,
                        refusal: "run again with --yes to delete \(doomed) items and remove the passcode")
                }
                try KeychainDevice.removePasscode(current: try SecretInput.line(prompt: "Current passcode: "))
                if doomed > 0 {
                    KeychainCommand.note("passcode removed; deleted \(doomed) item\(doomed == 1 ? "" : "s")")
                }
            }
        }
    }

    struct EraseAfterFailures: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase-after-failures",
            abstract: "Erase every item after 10 consecutive failed passcode attempts (on|off).")
        @Argument(help: "on or off") var setting: Toggle
        func run() throws {
            try KeychainCommand.run {
                try KeychainDevice.setEraseAfterFailedAttempts(
                    setting == .on, passcode: try SecretInput.line(prompt: "Passcode: "))
            }
        }
    }
}

enum Toggle: String, ExpressibleByArgument {
    case on, off
}

struct Erase: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Erase every item and key (asks for the passcode; without a passcode, needs --yes).",
        discussion: """
            Says how many items go. This is also the way out when the keychain's files do not belong together or one \
            is \
            missing or altered (errSecDecode): with --yes it removes them, after saying so. Restoring the files is the \
            other way.
            """)
    @Flag(help: "Confirm erasing a keychain without a passcode, or one whose files cannot be opened.") var yes = false

    func run() throws {
        try KeychainCommand.run {
            let count: Int
            let passcodeSet: Bool
            do {
                count = try KeychainDevice.itemCount()
                passcodeSet = try KeychainDevice.status().passcodeSet
            } catch let error as KeychainError where [errSecDecode, errSecNotAvailable].contains(error.status) {
                try eraseUnopenable(error)
                return
            }
            KeychainCommand.note(
                "erasing the keychain deletes \(count) item\(count == 1 ? "" : "s") and every key; this cannot be "
                    + "undone"
            )
            var passcode: SecretBytes?
            if passcodeSet {
                passcode = try SecretInput.line(prompt: "Passcode: ")
            } else {
                try KeychainCommand.confirm(
                    "Erase the keychain?", yes: yes,
                    refusal: "no passcode is set; run again with --yes to erase \(count) items")
            }
            let erased = try KeychainDevice.erase(passcode: passcode)
            KeychainCommand.note("erased \(erased) item\(erased == 1 ? "" : "s")")
        }
    }

    private func eraseUnopenable(_ error: KeychainError) throws {
        guard yes else {
            throw KeychainError(
                status: error.status,
                message:
                    "\(error.message)\nkeychainctl: the keychain cannot be opened, so erasing cannot ask for its "
                    + "passcode: `keychainctl erase --yes` removes its files"
            )
        }
        KeychainCommand.note("the keychain cannot be opened: \(error.message)")
        let count = try KeychainDevice.eraseUnopenableKeychain()
        KeychainCommand.note(
            "removed the keychain's files\(count.map { " (\($0) item\($0 == 1 ? "" : "s"))" } ?? ""); the next use "
                + "starts a new keychain"
        )
    }
}
