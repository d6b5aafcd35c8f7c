/// A change the owner makes to the simulated sensor (``Enclave/changeSimulatedSensor(_:passcode:)``).
public enum SimulatedSensorChange: Sendable, Hashable {
    /// Turns the sensor on (true) or off.
    case setEnabled(Bool)
    /// Enrolls a finger under this name: a fresh random template, sealed in the Enclave.
    case enroll(finger: String)
    /// Removes the enrolled finger of this name.
    case remove(finger: String)
}
