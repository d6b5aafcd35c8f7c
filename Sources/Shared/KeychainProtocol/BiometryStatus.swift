import Foundation

/// Which kind of biometric sensor the Enclave uses.
public enum SensorKind: String, Sendable, Codable {
    /// No sensor: biometry is not available.
    case none
    /// The simulated sensor (the iOS Simulator's Touch ID menu, for Linux), turned on by the owner.
    case simulated
    /// A real fingerprint reader, through the Linux fingerprint daemon.
    case fprintd
}

/// The state of biometric authentication, as the Enclave sees it.
public struct BiometryStatus: Sendable, Hashable {
    /// Apple: 5 unsuccessful matches in a row, then the passcode is required.
    public static let lockoutThreshold = 5

    /// The sensor in use.
    public var sensor: SensorKind
    /// Names of the enrolled fingers (never templates).
    public var enrolledFingers: [String]
    /// True after 5 consecutive failed matches, until the passcode is entered.
    public var isLockedOut: Bool
    /// True when the passcode must be entered before biometry can be used: after a reboot, or
    /// 48 hours after the last passcode entry.
    public var passcodeRequired: Bool
    /// Consecutive failed matches (across evaluations and processes).
    public var consecutiveFailures: Int
    /// A hash of the enrolled set; changes when a finger is added or removed; nil when none is.
    public var domainState: Data?
    /// True when a device passcode is set (biometry requires one).
    public var passcodeSet: Bool

    /// Creates a status.
    public init(
        sensor: SensorKind, enrolledFingers: [String], isLockedOut: Bool, passcodeRequired: Bool,
        consecutiveFailures: Int, domainState: Data?, passcodeSet: Bool
    ) {
        self.sensor = sensor
        self.enrolledFingers = enrolledFingers
        self.isLockedOut = isLockedOut
        self.passcodeRequired = passcodeRequired
        self.consecutiveFailures = consecutiveFailures
        self.domainState = domainState
        self.passcodeSet = passcodeSet
    }
}

/// The result of waiting for one touch on the sensor.
public enum BiometricMatch: Sendable, Hashable {
    /// No touch within the wait.
    case noTouch
    /// A touch that matched an enrolled finger; the server keeps the Enclave's grant under the
    /// authentication context that waited.
    case matched
    /// A touch that matched no enrolled finger (counted toward the lockout).
    case notMatched
}
