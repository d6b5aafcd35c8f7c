import Foundation
import KeychainProtocol

/// What a sensor reports after a wait.
public enum SensorReading: Sendable, Hashable {
    /// Nothing was touched.
    case none
    /// A sample the Enclave must match (the simulated sensor: an opaque, Enclave-sealed touch).
    case sample(Data)
    /// The sensor matched by itself (fprintd keeps its own templates): true for a match.
    case verdict(Bool)
}

/// A fingerprint sensor. Implementations: ``SimulatedSensor`` and ``FprintdSensor``; tests use
/// stubs.
public protocol BiometricSensor: Sendable {
    /// Which kind of sensor this is.
    var kind: SensorKind { get }
    /// Waits up to `timeout` seconds for one touch.
    func awaitTouch(timeout: Double) throws(KeychainError) -> SensorReading
    /// Stops any wait in progress (the prompt closed).
    func endWait()
}
