import Foundation
import KeychainClient
import Synchronization

/// Asks whether the device owner is here: Apple's `LAContext`, on Linux.
///
/// For example, the guide's "Add a Chore":
///
/// ```swift
/// let context = LAContext()
/// var error: NSError?
/// if context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) {
///     context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "To add a
/// new chore") { success, error in
///         // success: open the form; otherwise offer the app's fallback
///     }
/// }
/// ```
///
/// The keychain draws the sheet, not the app: keychaind shows it on the terminal of the process
/// it identified, under that executable's name, reads the passcode or waits for the touch, and
/// answers with the outcome only, so the passcode never enters the app's memory. The rules live
/// in the Enclave (the keychain's `Enclave` module): it matches touches, counts failures across
/// evaluations and processes, and checks the passcode. Where no sheet can be shown (no
/// terminal), an evaluation fails with `notInteractive`, never hangs.
///
/// A context is an object with identity, as Apple's (an `NSObject`): two contexts are equal only
/// when they are the same one, so they can be kept in sets and `[String: AnyHashable]` queries.
///
/// Apple documentation: <https://developer.apple.com/documentation/localauthentication/lacontext>
public final class LAContext: Sendable, Hashable {
    /// The settings a caller can change.
    struct Settings: Sendable {
        var fallbackTitle: String?
        var cancelTitle: String?
        var reason = ""
        var reuseDuration: Double = 0
        var interactionNotAllowed = false
    }

    private struct State: Sendable {
        var settings = Settings()
        var biometryType = LABiometryType.none
        var domainState: Data?
        var invalidated = false
        var evaluations = 0
        /// Monotonic time (ns) of the last success, for the reuse window.
        var lastSuccess: UInt64?
        var credentials: [LACredentialType: SecretBytes] = [:]
        /// The last biometric evaluation ended with the user choosing the fallback, or needing
        /// it (failed matches, lockout): the next deviceOwnerAuthentication asks for the passcode
        /// directly, once.
        var passcodeChosen = false
    }

    private let state = Mutex(State())
    /// The terminal the keychain draws this context's sheets on instead of this process's own.
    private let promptTerminal: String?
    /// This context's name in the keychain server, which keeps what its evaluations earned
    /// (the Enclave's grants never come to this process). Keychain calls using the context
    /// send the name.
    package let identifier = AuthenticationContextID.random()

    /// A context whose sheets the keychain draws on this process's terminal.
    public init() {
        promptTerminal = nil
    }

    /// A context whose sheets the keychain draws on `terminal` (`/dev/pts/3`), a terminal of
    /// this process's user: the ssh agent names the terminal of the `ssh` it signs for.
    package init(promptTerminal terminal: String) {
        promptTerminal = terminal
    }

    // MARK: Settings

    /// The fallback button's title: nil shows "Enter Passcode"; an empty string hides the button.
    /// (iOS's Touch ID sheet says "Enter Password"; here every sheet names the one secret the
    /// keychain has, the device passcode.)
    public var localizedFallbackTitle: String? {
        get { state.withLock { $0.settings.fallbackTitle } }
        set { state.withLock { $0.settings.fallbackTitle = newValue } }
    }

    /// The Cancel button's title: nil or empty shows "Cancel".
    public var localizedCancelTitle: String? {
        get { state.withLock { $0.settings.cancelTitle } }
        set { state.withLock { $0.settings.cancelTitle = newValue } }
    }

    /// The reason shown when the caller gives none (keychain operations using this context).
    public var localizedReason: String {
        get { state.withLock { $0.settings.reason } }
        set { state.withLock { $0.settings.reason = newValue } }
    }

    /// How long, in seconds, a success on this context is reused without a new prompt; 0 (the
    /// default) reuses nothing; values above `LATouchIDAuthenticationMaximumAllowableReuseDuration`
    /// (300 s) count as 300. Measured on a monotonic clock.
    public var touchIDAuthenticationAllowableReuseDuration: Double {
        get { state.withLock { $0.settings.reuseDuration } }
        set {
            state.withLock {
                $0.settings.reuseDuration = min(max(newValue, 0), LATouchIDAuthenticationMaximumAllowableReuseDuration)
            }
        }
    }

    /// When true, evaluations that would prompt fail with `notInteractive`, and keychain calls
    /// with this context fail with `errSecInteractionNotAllowed`.
    public var interactionNotAllowed: Bool {
        get { state.withLock { $0.settings.interactionNotAllowed } }
        set { state.withLock { $0.settings.interactionNotAllowed = newValue } }
    }

    /// The biometry this device has; set by `canEvaluatePolicy` and `evaluatePolicy`.
    public var biometryType: LABiometryType { state.withLock { $0.biometryType } }

    /// A hash of the enrolled fingers after a successful `canEvaluatePolicy` or biometric
    /// evaluation: it changes when a finger is added or removed; nil when none is enrolled.
    @available(*, deprecated, message: "use domainState.biometry.stateHash")
    public var evaluatedPolicyDomainState: Data? { state.withLock { $0.domainState } }

    /// The enrolled state (iOS 18's replacement for `evaluatedPolicyDomainState`).
    public var domainState: LADomainState {
        let (type, hash) = state.withLock { ($0.biometryType, $0.domainState) }
        return LADomainState(biometry: LADomainStateBiometry(biometryType: type, stateHash: hash))
    }

    // MARK: Evaluation

    /// Whether `policy` can be evaluated now (passcode set, sensor present, finger enrolled,
    /// not locked out). Sets `biometryType` and, for biometric policies, the domain state.
    ///
    /// - Parameter error: set to an `NSError` of `LAErrorDomain` when the answer is false.
    public func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        if state.withLock({ $0.invalidated }) {
            error?.pointee = LAError(.invalidContext) as NSError
            return false
        }
        let result = PolicyPreflight.check(policy)
        record(result, policy: policy, success: false)
        if case .failure(let failure) = result {
            error?.pointee = failure as NSError
            return false
        }
        return true
    }

    /// Evaluates `policy`, showing the sheet with `localizedReason`; calls `reply` on another
    /// thread with the outcome.
    ///
    /// After a biometric evaluation of this context ended with `userFallback` (the user chose
    /// "Enter Passcode"), `authenticationFailed` or `biometryLockout`, the next
    /// `deviceOwnerAuthentication` on it goes straight to the passcode, once, instead of showing
    /// the fingerprint sheet again: the app's fallback of the guide, reached in one step. (What
    /// iOS shows there is UNCONFIRMED; apps pass the same context to their fallback.)
    ///
    /// An empty reason fails with `authenticationFailed` and a message saying so (Apple raises
    /// an exception there; a program here gets an error instead).
    public func evaluatePolicy(
        _ policy: LAPolicy, localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        Thread.detachNewThread { [self] in
            switch self.evaluate(policy, reason: localizedReason) {
            case .success: reply(true, nil)
            case .failure(let error): reply(false, error)
            }
        }
    }

    /// Evaluates `policy` (the async form iOS code uses).
    ///
    /// - Throws: `LAError`.
    @discardableResult
    public func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            evaluatePolicy(policy, localizedReason: localizedReason) { success, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: success) }
            }
        }
    }

    /// Ends this context: an evaluation in progress fails with `appCancel`, later ones with
    /// `invalidContext`, and any reusable success is forgotten.
    public func invalidate() {
        let evaluating = state.withLock { state in
            state.invalidated = true
            state.lastSuccess = nil
            return state.evaluations > 0
        }
        // The keychain ends the sheet it shows for this context: the request goes beside the one
        // that waits for it.
        if evaluating { _ = try? ProcessKeychain.performBeside(.invalidateContext(identifier)) }
        // The server forgets what this context earned; it would anyway when the connection ends.
        _ = try? ProcessKeychain.perform(.invalidateContext(identifier))
    }

    /// Hands the context a credential (the app's password); nil removes it.
    @discardableResult
    public func setCredential(_ credential: Data?, type: LACredentialType) -> Bool {
        state.withLock { $0.credentials[type] = credential.map { SecretBytes($0) } }
        return true
    }

    /// True when a credential of `type` was set.
    public func isCredentialSet(_ type: LACredentialType) -> Bool {
        state.withLock { $0.credentials[type] != nil }
    }

    /// Runs an evaluation on the calling thread.
    ///
    /// - Parameter hidesFallback: no fallback button whatever `localizedFallbackTitle` says
    ///   (biometry-only keychain items offer no passcode).
    func evaluate(
        _ policy: LAPolicy, reason: String, passcodeOnly: Bool = false, hidesFallback: Bool = false
    ) -> Result<Void, LAError> {
        guard !reason.isEmpty else {
            return .failure(
                LAError(
                    .authenticationFailed, message: "localizedReason must not be empty: the sheet must say why it asks")
            )
        }
        var (settings, invalidated, reusable) = state.withLock { state in
            let window = UInt64(state.settings.reuseDuration * 1e9)
            let reusable = state.lastSuccess.map { DispatchTime.now().uptimeNanoseconds - $0 <= window } ?? false
            return (state.settings, state.invalidated, reusable && window > 0)
        }
        if invalidated { return .failure(LAError(.invalidContext)) }
        if reusable && !passcodeOnly { return .success(()) }
        if hidesFallback { settings.fallbackTitle = "" }
        state.withLock { $0.evaluations += 1 }
        defer { state.withLock { $0.evaluations -= 1 } }
        let passcodeOnly = passcodeOnly || state.withLock { state in
            defer { if policy == .deviceOwnerAuthentication { state.passcodeChosen = false } }
            return policy == .deviceOwnerAuthentication && state.passcodeChosen
        }
        let result = askKeychain(policy, reason: reason, settings: settings, passcodeOnly: passcodeOnly)
        if policy != .deviceOwnerAuthentication, case .failure(let error) = result,
            [.userFallback, .authenticationFailed, .biometryLockout].contains(error.code) {
            state.withLock { $0.passcodeChosen = true }
        }
        record(result, policy: policy, success: true)
        return result.map { _ in () }
    }

    /// Has the keychain authenticate the owner (``KeychainRequest/authenticateOwner(_:)``): it
    /// checks what the factors need, as `canEvaluatePolicy` does, then draws the sheet.
    private func askKeychain(
        _ policy: LAPolicy, reason: String, settings: Settings, passcodeOnly: Bool
    ) -> Result<BiometryStatus, LAError> {
        if [.deviceOwnerAuthenticationWithWatch, .deviceOwnerAuthenticationWithWristDetection].contains(policy) {
            return .failure(LAError(.companionNotAvailable))
        }
        guard !settings.interactionNotAllowed else {
            // What the policy lacks comes first, as when the keychain checks it.
            if case .failure(let error) = PolicyPreflight.check(passcodeOnly ? .deviceOwnerAuthentication : policy) {
                return .failure(error)
            }
            return .failure(LAError(.notInteractive, message: "the context forbids interaction"))
        }
        let biometryOnly = policy != .deviceOwnerAuthentication
        let fallback: String? =
            switch settings.fallbackTitle {
            case .some(""): nil
            case .some(let title): title
            case .none: "Enter Passcode"
            }
        let authentication = OwnerAuthentication(
            factors: passcodeOnly ? .passcode : biometryOnly ? .biometry : .biometryOrPasscode, reason: reason,
            cancelTitle: settings.cancelTitle.flatMap { $0.isEmpty ? nil : $0 } ?? "Cancel",
            fallbackTitle: fallback, context: identifier, terminal: promptTerminal)
        do {
            switch try ProcessKeychain.perform(.authenticateOwner(authentication)) {
            case .biometry(let status): return .success(status)
            case .authenticationFailed(let failure, let message): return .failure(LAError(failure, message: message))
            // Never the reply itself in the message: a reply of another kind may carry a secret.
            default: return .failure(LAError(.authenticationFailed, message: "the keychain answered out of turn"))
            }
        } catch {
            return .failure(
                LAError(.authenticationFailed, message: "the keychain could not authenticate: \(error.message)"))
        }
    }

    /// Authenticates the device owner as `accessControl` asks, for a keychain call using this
    /// context (called when the server refused what the context had earned so far, or it had
    /// earned nothing): biometry for biometry-only constraints (no passcode fallback), the
    /// passcode for devicePasscode, biometry then passcode for `.and`, and the owner policy for
    /// userPresence and `.or`. What the evaluations earn stays in the server, under
    /// ``identifier``, usable until `invalidate()` and within the Enclave's 300-second grant
    /// lifetime.
    ///
    /// - Throws: errSecUserCanceled (-128) when the user cancels, errSecAuthFailed (-25293) when
    ///   authentication fails or biometry is locked out or missing, errSecNotAvailable when no
    ///   passcode is set, errSecInteractionNotAllowed (-25308) when no prompt may be shown.
    package func authenticate(for accessControl: AccessControl, reason: String) throws(KeychainError) {
        let (invalidated, interactionNotAllowed, fallbackReason) = state.withLock {
            ($0.invalidated, $0.settings.interactionNotAllowed, $0.settings.reason)
        }
        if invalidated { throw KeychainError(.errSecAuthFailed, "the authentication context was invalidated") }
        if interactionNotAllowed {
            throw KeychainError(
                .errSecInteractionNotAllowed, "the item needs authentication and the context forbids interaction")
        }
        let shown =
            reason.isEmpty ? (fallbackReason.isEmpty ? "Authenticate to use a keychain item" : fallbackReason) : reason
        let (factors, all) = accessControl.requiredFactors
        var steps: [(LAPolicy, Bool)] = []
        switch (factors.contains(.biometry), factors.contains(.passcode)) {
        case (true, true):
            steps =
                all
                ? [(.deviceOwnerAuthenticationWithBiometrics, false), (.deviceOwnerAuthentication, true)]
                : [(.deviceOwnerAuthentication, false)]
        case (true, false): steps = [(.deviceOwnerAuthenticationWithBiometrics, false)]
        case (false, true): steps = [(.deviceOwnerAuthentication, true)]
        case (false, false): return
        }
        for (policy, passcodeOnly) in steps {
            // Biometry-only constraints offer no passcode fallback.
            let hidesFallback = policy == .deviceOwnerAuthenticationWithBiometrics
            if case .failure(let error) = evaluate(
                policy, reason: shown, passcodeOnly: passcodeOnly, hidesFallback: hidesFallback)
            {
                throw Self.keychainError(error, accessControl)
            }
        }
    }

    /// The credential set with `setCredential(_:type:)`, for keychain calls.
    package func credential(_ type: LACredentialType) -> SecretBytes? {
        state.withLock { $0.credentials[type] }
    }

    /// The keychain's code for a failed evaluation. "No prompt could be shown" keeps the access
    /// control that asked for one, so that callers can tell it from a locked keychain (the same
    /// errSecInteractionNotAllowed).
    private static func keychainError(_ error: LAError, _ accessControl: AccessControl) -> KeychainError {
        switch error.code {
        case .userCancel, .appCancel, .systemCancel, .userFallback: KeychainError(.errSecUserCanceled, error.message)
        case .notInteractive:
            KeychainError(
                status: KeychainError.errSecInteractionNotAllowed.status, message: error.message,
                requiredAuthentication: accessControl)
        case .passcodeNotSet:
            KeychainError(.errSecNotAvailable, "no device passcode is set, so the owner cannot authenticate")
        default: KeychainError(.errSecAuthFailed, error.message)
        }
    }

    private func record(_ result: Result<BiometryStatus, LAError>, policy: LAPolicy, success: Bool) {
        state.withLock { state in
            guard case .success(let status) = result else { return }
            state.biometryType = status.sensor == .none ? .none : .touchID
            if policy != .deviceOwnerAuthentication || success { state.domainState = status.domainState }
            if success { state.lastSuccess = DispatchTime.now().uptimeNanoseconds }
        }
    }
}

extension LAContext {
    public static func == (lhs: LAContext, rhs: LAContext) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
