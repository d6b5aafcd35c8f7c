import Foundation

/// What the Enclave knows of biometry, in one answer (``Enclave/biometryReport(sensorFingers:)``):
/// the simulated sensor's switch and enrolled fingers, the failure counters and their rules, and
/// the enrolled set's domain state. Names and counts only; no template ever leaves the Enclave.
public struct BiometryReport: Sendable, Hashable {
    /// True when the owner turned the simulated sensor on.
    public var simulatedSensorEnabled: Bool
    /// Names of the simulated sensor's enrolled fingers.
    public var simulatedFingers: [String]
    /// Failed matches in a row, across evaluations and processes.
    public var consecutiveFailures: Int
    /// True after five failures in a row, until the passcode is entered.
    public var isLockedOut: Bool
    /// True when the passcode must be entered before biometry serves again (48 hours, a restart).
    public var passcodeRequired: Bool
    /// True when a device passcode is set.
    public var passcodeSet: Bool
    /// A keyed hash of the enrolled set (`evaluatedPolicyDomainState`) of the sensor in use:
    /// changes when a finger is added or removed, differs between devices, nil when nothing is
    /// enrolled.
    public var domainState: Data?
}
