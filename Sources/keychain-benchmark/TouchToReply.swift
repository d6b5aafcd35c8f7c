import Foundation
import Keychain
import LocalAuth
import Synchronization

/// A prompt with nobody at it: interactive, presses nothing, counts the sheets it showed.
final class UnattendedPrompt: AuthenticationPrompt {
    let sheetsShown = Mutex(0)
    var isInteractive: Bool { true }

    func present(_ sheet: PromptSheet) -> any PromptSession {
        sheetsShown.withLock { $0 += 1 }
        return Session()
    }

    final class Session: PromptSession {
        func pressedButton() -> PromptButton? { nil }
        func show(_ message: String) {}
        func readPasscode(shouldStop: () -> Bool) -> SecretBytes? { nil }
        func dismiss() {}
    }
}

/// The time from a touch on the simulated sensor (as `keychainctl biometry touch` makes it) to
/// the `evaluatePolicy` reply, for a biometrics-only evaluation already showing its sheet.
func touchToReply(rounds: Int) throws -> Timings {
    try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
    _ = try KeychainServices.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "correct horse")))
    _ = try KeychainServices.perform(.enrollFinger(name: "thumb", passcode: SecretBytes(utf8: "correct horse")))
    let prompt = UnattendedPrompt()
    var timings = Timings()
    for round in 1...rounds {
        let context = LAContext(prompt: prompt)
        let replied = Mutex<UInt64?>(nil)
        let done = DispatchSemaphore(value: 0)
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "benchmark") { success, _ in
            precondition(success)
            replied.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
            done.signal()
        }
        while prompt.sheetsShown.withLock({ $0 }) < round { usleep(1000) }
        let touched = DispatchTime.now().uptimeNanoseconds
        _ = try KeychainServices.perform(.simulateTouch(matching: true, finger: nil))
        done.wait()
        timings.samples.append(Double((replied.withLock { $0 } ?? touched) - touched) / 1000)
    }
    return timings
}
