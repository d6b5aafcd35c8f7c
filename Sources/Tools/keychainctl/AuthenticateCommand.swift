import ArgumentParser
import Foundation
import Keychain
import LocalAuthentication
import Synchronization

struct Authenticate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a LocalAuthentication evaluation: exit 0 when the device owner authenticated.",
        discussion: "On failure, prints the LAError name and code on stderr and exits 1.")

    enum Policy: String, ExpressibleByArgument {
        case biometrics, owner
        var laPolicy: LAPolicy {
            self == .biometrics ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
        }
    }

    @Option(help: "biometrics (no passcode fallback) or owner (biometry, then the passcode).") var policy: Policy
    @Option(help: "Why authentication is needed; shown on the prompt.") var reason: String
    @Option(help: "The fallback button's title; an empty string hides it.") var fallbackTitle: String?

    func run() throws {
        try KeychainCommand.run {
            let context = LAContext()
            context.localizedFallbackTitle = fallbackTitle
            let outcome = Mutex<(Bool, (any Error)?)?>(nil)
            let done = DispatchSemaphore(value: 0)
            context.evaluatePolicy(policy.laPolicy, localizedReason: reason) { success, error in
                outcome.withLock { $0 = (success, error) }
                done.signal()
            }
            done.wait()
            guard let (success, error) = outcome.withLock({ $0 }), !success else { return }
            let laError = error as? LAError ?? LAError(.authenticationFailed)
            StandardError.write(
                "keychainctl: error: LAError.\(laError.code) (\(laError.code.rawValue)): \(laError.message)\n")
            throw ExitCode(1)
        }
    }
}
