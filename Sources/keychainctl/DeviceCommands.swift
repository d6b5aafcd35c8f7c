import ArgumentParser
import Foundation
import Keychain

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show whether a passcode is set, the lock state, and failed attempts.")

    func run() throws {
        try Session.run {
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
            let wait = status.secondsUntilNextAttempt > 0 ? "in \(Int(status.secondsUntilNextAttempt.rounded(.up))) seconds" : "now"
            if case .biometry(let biometry) = try KeychainServices.perform(.biometryStatus), biometry.sensor == .simulated {
                print("WARNING: THE SIMULATED FINGERPRINT SENSOR IS ON. Anyone who can run `keychainctl biometry touch` as you can pass biometric checks. Turn it off: keychainctl biometry simulate off")
            }
            print("""
                passcode: \(status.passcodeSet ? "set" : "not set")
                state: \(state)
                failed passcode attempts: \(status.failedAttempts)
                next passcode attempt allowed: \(wait)
                erase after 10 failed attempts: \(status.eraseAfterFailedAttempts ? "on" : "off")
                keychain: \(EmbeddedTransport.defaultDirectory().path)
                """)
        }
    }
}

struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Lock the keychain: WhenUnlocked items become unavailable.")

    func run() throws {
        try Session.run {
            guard try KeychainDevice.status().passcodeSet else {
                Session.note("no passcode is set, so the keychain cannot lock; set one with `keychainctl passcode set`")
                return
            }
            try KeychainDevice.lock()
        }
    }
}

struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unlock the keychain with the passcode (standard input or a hidden prompt).")

    func run() throws {
        try Session.run {
            try KeychainDevice.unlock(passcode: try SecretInput.line(prompt: "Passcode: "))
        }
    }
}

struct Passcode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set, change or remove the device passcode.",
        discussion: "Passcodes come one per line on standard input (current first where needed, then the new one), or from hidden prompts on a terminal.",
        subcommands: [Set.self, Change.self, Remove.self, EraseAfterFailures.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a passcode when none is set.")
        func run() throws {
            try Session.run { try KeychainDevice.setPasscode(current: nil, new: try SecretInput.newPasscode()) }
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change the passcode (current, then new).")
        func run() throws {
            try Session.run {
                let current = try SecretInput.line(prompt: "Current passcode: ")
                try KeychainDevice.setPasscode(current: current, new: try SecretInput.newPasscode())
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the passcode; deletes every WhenPasscodeSetThisDeviceOnly item.")
        func run() throws {
            try Session.run { try KeychainDevice.removePasscode(current: try SecretInput.line(prompt: "Current passcode: ")) }
        }
    }

    struct EraseAfterFailures: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase-after-failures", abstract: "Erase every item after 10 consecutive failed passcode attempts (on|off).")
        @Argument(help: "on or off") var setting: Toggle
        func run() throws {
            try Session.run {
                try KeychainDevice.setEraseAfterFailedAttempts(setting == .on, passcode: try SecretInput.line(prompt: "Passcode: "))
            }
        }
    }
}

enum Toggle: String, ExpressibleByArgument {
    case on, off
}
