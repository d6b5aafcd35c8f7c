import Foundation

/// The enrolled state of the device's authentication methods (iOS 18).
public struct LADomainState: Sendable, Hashable {
    /// The biometric part.
    public let biometry: LADomainStateBiometry
    /// A hash of every part; here, the biometric one.
    public var stateHash: Data? { biometry.stateHash }
}

/// The enrolled state of biometry.
public struct LADomainStateBiometry: Sendable, Hashable {
    /// The kind of biometry.
    public let biometryType: LABiometryType
    /// A hash of the enrolled set: changes when a finger is added or removed; nil when none is.
    public let stateHash: Data?
}
