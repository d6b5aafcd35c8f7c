import Foundation

/// A touch as a sensor reports it, for the Enclave to judge and count
/// (``Enclave/evaluate(_:)``).
public enum SensorTouch: Sendable, Hashable {
    /// A sealed sample from the simulated sensor's channel (``Enclave/simulatedTouch(matching:finger:)``):
    /// the Enclave matches it against the enrolled templates.
    case simulatedSample(Data)
    /// fprintd's verdict, with the names of the fingers it has enrolled (the set a match grants
    /// for): the Enclave counts it.
    case sensorVerdict(matched: Bool, enrolledFingers: [String])
}
