import Benchmark
import Foundation
import Keychain
import KeychainEmbedded
import KeychainPrompt
import LocalAuthentication
import Synchronization

/// A prompt with nobody at it: interactive, presses nothing, counts the sheets it showed. The
/// keychain draws every sheet with it.
final class UnattendedPrompt: AuthenticationPrompt, PromptProvider {
    let sheetsShown = Mutex(0)
    var isInteractive: Bool { true }
    var appName: String { "bench" }

    func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt { self }

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
/// the `evaluatePolicy` reply, for a biometrics-only evaluation already showing its sheet. Runs
/// on a keychain of its own, made in the fixtures' folder and removed when the process exits.
final class TouchToReply: Sendable {
    static let shared = TouchToReply()
    private let prompt = UnattendedPrompt()

    /// A new keychain with a passcode, the simulated sensor, and one enrolled finger.
    func prepare() throws {
        let directory = Fixture.root.appendingPathComponent("touch-\(getpid())")
        atexit { try? FileManager.default.removeItem(at: Fixture.root.appendingPathComponent("touch-\(getpid())")) }
        ProcessKeychain.transport = EmbeddedTransport(
            directory: directory, accessGroups: ["bench"], sharedUnlock: false, prompts: prompt)
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        _ = try ProcessKeychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "correct horse")))
        _ = try ProcessKeychain.perform(.enrollFinger(name: "thumb", passcode: SecretBytes(utf8: "correct horse")))
    }

    /// One evaluation: measured from the touch to the reply.
    func measureOne(_ benchmark: Benchmark) {
        let shown = prompt.sheetsShown.withLock { $0 }
        let context = LAContext()
        let done = DispatchSemaphore(value: 0)
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "benchmark") {
            success, error in
            precondition(success, "the touch did not authenticate: \(String(describing: error))")
            done.signal()
        }
        // The prompt tells the sensor that it waits before it shows its sheet.
        while prompt.sheetsShown.withLock({ $0 }) == shown { usleep(500) }
        benchmark.startMeasurement()
        touch()
        done.wait()
        benchmark.stopMeasurement()
    }

    /// Touches the sensor. A waiting prompt says so again at each of its 0.1-second waits; on a
    /// loaded machine its thread can go unscheduled past the sensor's freshness and grace (3 s),
    /// and the touch is refused (errSecBadReq) as one with nobody waiting: the finger is put
    /// down again, as a user's would be, up to five times.
    private func touch() {
        for attempt in 1...5 {
            do {
                _ = try ProcessKeychain.perform(.simulateTouch(matching: true, finger: nil))
                return
            } catch where error.status == KeychainError.errSecBadReq.status && attempt < 5 {
                continue
            } catch {
                preconditionFailure("touch: \(error)")
            }
        }
    }
}
