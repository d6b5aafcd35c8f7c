/// What an evaluation must establish, with Apple's raw values (LAPublicDefines.h).
///
/// Apple documentation: <https://developer.apple.com/documentation/localauthentication/lapolicy>
public enum LAPolicy: Int, Sendable {
    /// Biometry only. The fallback button ends the evaluation with `userFallback`: the app
    /// implements its own fallback.
    case deviceOwnerAuthenticationWithBiometrics = 1
    /// Biometry when enrolled and not locked out, with the device passcode as the fallback;
    /// the passcode alone when there is no biometry.
    case deviceOwnerAuthentication = 2
    /// A paired watch (macOS). No companion device exists here: `companionNotAvailable`.
    case deviceOwnerAuthenticationWithWatch = 3
    /// Biometry or a paired watch (macOS); here, biometry.
    case deviceOwnerAuthenticationWithBiometricsOrWatch = 4
    /// Wrist detection (watchOS). Not available here: `companionNotAvailable`.
    case deviceOwnerAuthenticationWithWristDetection = 5

    /// The iOS 18 name of `deviceOwnerAuthenticationWithWatch`.
    public static let deviceOwnerAuthenticationWithCompanion = LAPolicy.deviceOwnerAuthenticationWithWatch
    /// The iOS 18 name of `deviceOwnerAuthenticationWithBiometricsOrWatch`.
    public static let deviceOwnerAuthenticationWithBiometricsOrCompanion = LAPolicy
        .deviceOwnerAuthenticationWithBiometricsOrWatch
}

/// The kind of biometry, with Apple's raw values.
public enum LABiometryType: Int, Sendable {
    /// No biometry, or not determined yet (call `canEvaluatePolicy` first).
    case none = 0
    /// A fingerprint sensor: what a Linux fingerprint reader (and the simulated sensor) is.
    case touchID = 1
    /// Face recognition.
    case faceID = 2
    /// Iris recognition.
    case opticID = 4

    /// The deprecated name of `none`.
    @available(*, deprecated, renamed: "none")
    public static let LABiometryNone = LABiometryType.none
}

/// The kinds of credential an app can hand a context, with Apple's raw values.
public enum LACredentialType: Int, Sendable {
    /// The app's own password for items protected by `applicationPassword`.
    case applicationPassword = 0
    /// A smart card PIN.
    case smartCardPIN = -3
}

/// The longest `touchIDAuthenticationAllowableReuseDuration`: 5 minutes.
public let LATouchIDAuthenticationMaximumAllowableReuseDuration: Double = 300

/// The error domain of `LAError`.
public let LAErrorDomain = "com.apple.LocalAuthentication"
