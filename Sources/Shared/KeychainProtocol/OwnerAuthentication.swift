/// An authentication of the device owner that the keychain runs itself
/// (``KeychainRequest/authenticateOwner(_:)``): the keychain draws the sheet, waits for the touch
/// or reads the passcode, and answers the app with the outcome only. The passcode never enters
/// the app's process.
///
/// The app says what the sheet should say and which factors may answer; the keychain names the
/// app itself (from its identification, never from the request) and keeps every rule: three
/// failed matches end a sheet, five lock biometry out, a wrong passcode waits out its delay.
public struct OwnerAuthentication: Sendable, Hashable {
    /// What may answer.
    public enum Factors: UInt8, Sendable, CaseIterable {
        /// A touch, with a fallback to the passcode (`deviceOwnerAuthentication`).
        case biometryOrPasscode = 1
        /// A touch only (`deviceOwnerAuthenticationWithBiometrics`); the fallback button ends the
        /// evaluation with `userFallback`.
        case biometry = 2
        /// The passcode only (an item whose access control asks for the device passcode, or the
        /// owner's fallback after biometry failed).
        case passcode = 3
    }

    /// The longest reason, in UTF-8 bytes (the sheet says why, briefly).
    public static let maximumReason = 512
    /// The longest button title, in UTF-8 bytes.
    public static let maximumTitle = 64

    /// What may answer.
    public var factors: Factors
    /// Why the app asks (`localizedReason`), shown on the sheet; never empty.
    public var reason: String
    /// The Cancel button's title.
    public var cancelTitle: String
    /// The fallback button's title, or nil when the sheet has none.
    public var fallbackTitle: String?
    /// The context the grant is filed under, for the connection that asked.
    public var context: AuthenticationContextID
    /// A terminal to draw the sheet on instead of the app's own (`/dev/pts/3`): the ssh agent
    /// names the terminal of the `ssh` that asked for a signature. The keychain draws there only
    /// on a terminal of the app's own user.
    public var terminal: String?

    /// Creates a request; a reason or title longer than its limit (in UTF-8 bytes) is cut to it.
    public init(
        factors: Factors, reason: String, cancelTitle: String, fallbackTitle: String?,
        context: AuthenticationContextID, terminal: String? = nil
    ) {
        self.factors = factors
        self.reason = ReplyCoder.cut(reason, toUTF8Bytes: Self.maximumReason)
        self.cancelTitle = ReplyCoder.cut(cancelTitle, toUTF8Bytes: Self.maximumTitle)
        self.fallbackTitle = fallbackTitle.map { ReplyCoder.cut($0, toUTF8Bytes: Self.maximumTitle) }
        self.context = context
        self.terminal = terminal
    }
}

/// Why an owner authentication did not succeed (``KeychainReply/authenticationFailed(_:message:)``):
/// the app turns it into `LAError`'s code of the same name.
public enum OwnerAuthenticationFailure: UInt8, Sendable, CaseIterable {
    case authenticationFailed = 1
    case userCancel = 2
    case userFallback = 3
    case appCancel = 4
    case passcodeNotSet = 5
    case biometryNotAvailable = 6
    case biometryNotEnrolled = 7
    case biometryLockout = 8
    /// No sheet could be shown: no terminal, or no prompt agent.
    case notInteractive = 9
}
