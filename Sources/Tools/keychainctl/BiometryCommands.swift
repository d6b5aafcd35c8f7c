import ArgumentParser
import Foundation
import Keychain

struct Biometry: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fingerprints: status, enrollment, and the simulated sensor.",
        subcommands: [BiometryStatusCommand.self, Enroll.self, List.self, Remove.self, Simulate.self, Touch.self])

    static func status() throws -> BiometryStatus {
        guard case .biometry(let status) = try ProcessKeychain.perform(.biometryStatus) else {
            throw KeychainError(
                .errSecInternalComponent, "the keychain answered a biometry request with something else")
        }
        return status
    }

    struct BiometryStatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Show the sensor, enrolled fingers, failures and lockout.")
        func run() throws {
            try KeychainCommand.run {
                let status = try Biometry.status()
                let sensor =
                    switch status.sensor {
                    case .none: "none"
                    case .simulated:
                        "SIMULATED (testing only: anyone who can run `keychainctl biometry touch` as you can touch it)"
                    case .fprintd: "fingerprint reader (fprintd)"
                    }
                print(
                    """
                    sensor: \(sensor)
                    enrolled fingers: \(status.enrolledFingers.count)
                    consecutive failed matches: \(status.consecutiveFailures)
                    locked out: \(status.isLockedOut ? "yes (enter the passcode: keychainctl unlock)" : "no")
                    passcode required first: \
                    \(status.passcodeRequired ? "yes (after a restart or 48 hours: keychainctl unlock)" : "no")
                    """)
            }
        }
    }

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enroll a finger (needs the passcode).")
        @Option(help: "The finger's name.") var finger = "right-index-finger"
        func run() throws {
            try KeychainCommand.run {
                _ = try ProcessKeychain.perform(
                    .enrollFinger(name: finger, passcode: try SecretInput.line(prompt: "Passcode: ")))
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List enrolled fingers by name (never templates).")
        func run() throws {
            try KeychainCommand.run {
                for finger in try Biometry.status().enrolledFingers { print(finger) }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an enrolled finger (needs the passcode).")
        @Argument(help: "The finger's name.") var finger: String
        func run() throws {
            try KeychainCommand.run {
                _ = try ProcessKeychain.perform(
                    .removeFinger(name: finger, passcode: try SecretInput.line(prompt: "Passcode: ")))
            }
        }
    }

    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn the simulated sensor on or off (needs the passcode).")
        @Argument(help: "on or off") var setting: Toggle
        func run() throws {
            try KeychainCommand.run {
                _ = try ProcessKeychain.perform(
                    .setSimulatedSensor(setting == .on, passcode: try SecretInput.line(prompt: "Passcode: ")))
                if setting == .on {
                    KeychainCommand.note(
                        "WARNING: the simulated sensor is ON; turn it off with `keychainctl biometry simulate off`")
                }
            }
        }
    }

    struct Touch: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Touch the simulated sensor, from another terminal.")
        @Flag(help: "With an enrolled finger.") var matching = false
        @Flag(help: "With a finger that is not enrolled.") var nonMatching = false
        @Option(help: "Which enrolled finger (with --matching).") var finger: String?

        func validate() throws {
            guard matching != nonMatching else {
                throw ValidationError("give exactly one of --matching and --non-matching")
            }
            if finger != nil && nonMatching { throw ValidationError("--finger goes with --matching") }
        }

        func run() throws {
            try KeychainCommand.run {
                _ = try ProcessKeychain.perform(.simulateTouch(matching: matching, finger: finger))
            }
        }
    }
}
