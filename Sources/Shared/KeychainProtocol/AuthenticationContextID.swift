import Foundation

/// Names an authentication context (an `LAContext`) held by the keychain server.
///
/// The client knows only this name. What an evaluation earned (the Enclave's grants) stays in
/// the server, filed under the name *and* the connection that evaluated, so a name copied to
/// another connection, or guessed, opens nothing. `invalidate()`, lock, a passcode change and an
/// enrollment change forget what it earned.
public struct AuthenticationContextID: Sendable, Hashable {
    /// 16 random bytes.
    public let bytes: Data

    /// The context named by `bytes`; nil unless they are 16 bytes long.
    public init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A new, unguessable name.
    public static func random() -> AuthenticationContextID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return AuthenticationContextID(bytes: Data(bytes))!
    }
}
