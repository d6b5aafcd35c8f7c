/// Why bytes from the other end of a connection were not a valid message. The daemon answers
/// with `errSecDecode` and closes the connection; nothing in the message was acted on.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, for logs and the reply (never a value from the message).
    public var reason: String

    /// Creates an error with `reason`.
    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "malformed message: \(reason)" }

    /// The keychain error a client sees.
    public var keychainError: KeychainError {
        KeychainError(.errSecDecode, description)
    }
}
