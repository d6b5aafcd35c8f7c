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

/// Reads of a userPresence item through an authenticated context (grant checks, no prompt)
/// against reads of the same secret without access control, after `touchToReply` set up the
/// sensor.
func protectedReads(rounds: Int) throws -> (protected: Timings, plain: Timings) {
    var error: Unmanaged<CFError>?
    let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, &error)
    let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench-acl"]
    precondition(SecItemAdd(base.merging([kSecAttrAccount as String: "protected", kSecValueData as String: Data("s".utf8),
                                          kSecAttrAccessControl as String: access as Any]) { $1 } as CFDictionary, nil) == errSecSuccess)
    precondition(SecItemAdd(base.merging([kSecAttrAccount as String: "plain", kSecValueData as String: Data("s".utf8)]) { $1 } as CFDictionary, nil) == errSecSuccess)
    let prompt = UnattendedPrompt()
    let context = LAContext(prompt: prompt)
    let shown = prompt.sheetsShown.withLock { $0 }
    Thread.detachNewThread {
        while prompt.sheetsShown.withLock({ $0 }) == shown { usleep(1000) }
        _ = try? KeychainServices.perform(.simulateTouch(matching: true, finger: nil))
    }
    var (protected, plain) = (Timings(), Timings())
    for _ in 0..<rounds {
        var result: CFTypeRef?
        let query = base.merging([kSecAttrAccount as String: "protected", kSecReturnData as String: true, kSecUseAuthenticationContext as String: context]) { $1 }
        protected.measure { precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess) }
        let plainQuery = base.merging([kSecAttrAccount as String: "plain", kSecReturnData as String: true]) { $1 }
        plain.measure { precondition(SecItemCopyMatching(plainQuery as CFDictionary, &result) == errSecSuccess) }
    }
    // The first protected read waited for the touch; the reuse is what is measured.
    protected.samples.removeFirst()
    plain.samples.removeFirst()
    return (protected, plain)
}
