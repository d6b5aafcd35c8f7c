import Foundation
import Keychain

/// A wait for a touch that keychaind asks the sensor for itself, half a second per request so
/// that the command can stop between them; as in one sheet, three misses end it.
enum TouchWait {
    /// How long to wait for a touch.
    static let seconds: Double = 30
    /// How many misses end the attempt.
    static let missesAllowed = 3

    /// Sends `request` (made with the wait's length) until a touch matches.
    ///
    /// - Throws: `errSecAuthFailed` after ``missesAllowed`` misses or ``seconds`` without a
    ///   touch; keychaind's errors.
    static func untilMatch(_ request: (_ timeout: Double) -> KeychainRequest) throws {
        KeychainCommand.note("Touch the fingerprint sensor.")
        // The embedded keychain's sensor may still be verifying; keychaind ends its own waits.
        defer { _ = try? ProcessKeychain.perform(.endBiometricMatch) }
        let deadline = Date().addingTimeInterval(seconds)
        var misses = 0
        while Date() < deadline {
            switch try ProcessKeychain.perform(request(0.5)) {
            case .match(.noTouch):
                continue
            case .match(.matched), .done:
                return
            case .match(.notMatched):
                misses += 1
                guard misses < missesAllowed else {
                    throw KeychainError(.errSecAuthFailed, "the fingerprint was not recognized")
                }
                KeychainCommand.note("Not recognized. Try again.")
            default:
                throw KeychainError(.errSecInternalComponent, "the keychain answered with something else")
            }
        }
        throw KeychainError(.errSecAuthFailed, "no touch within \(Int(seconds)) seconds")
    }
}
