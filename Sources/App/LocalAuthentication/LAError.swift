import Foundation
import KeychainClient

/// An error from LocalAuthentication, with Apple's domain and codes.
///
/// Matches as on iOS:
///
/// ```swift
/// do {
///     try await context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason:
/// "To add a new chore") } catch let error as LAError where error.code == .userFallback {
///     // offer the app's own fallback
/// } catch LAError.userCancel {
///     // the user chose Cancel
/// }
/// ```
///
/// After `canEvaluatePolicy(_:error:)` the error is an `NSError` (domain `LAErrorDomain`);
/// on Linux an `NSError` does not cast back to `LAError`, so read it with
/// `LAError.Code(rawValue: error.code)` or `LAError(_nsError:)`.
///
/// Apple documentation: <https://developer.apple.com/documentation/localauthentication/laerror>
public struct LAError: Error, CustomNSError, Hashable, Sendable, CustomStringConvertible {
    /// The codes, with Apple's raw values (LAPublicDefines.h).
    public enum Code: Int, Sendable {
        /// The user failed to provide valid credentials.
        case authenticationFailed = -1
        /// The user chose Cancel.
        case userCancel = -2
        /// The user chose the fallback button (biometrics-only policy).
        case userFallback = -3
        /// The system canceled authentication.
        case systemCancel = -4
        /// No device passcode is set.
        case passcodeNotSet = -5
        /// Biometry is not available on this device.
        case biometryNotAvailable = -6
        /// No finger is enrolled.
        case biometryNotEnrolled = -7
        /// Too many failed matches: the passcode is required first.
        case biometryLockout = -8
        /// The app canceled authentication (`invalidate()` during an evaluation).
        case appCancel = -9
        /// The context was invalidated.
        case invalidContext = -10
        /// No companion device (watch) is available.
        case companionNotAvailable = -11
        /// The removable biometric accessory is not paired.
        case biometryNotPaired = -12
        /// The removable biometric accessory is not connected.
        case biometryDisconnected = -13
        /// Invalid dimensions (undocumented by Apple).
        case invalidDimensions = -14
        /// A prompt would be needed and none may be shown.
        case notInteractive = -1004

        /// Deprecated names.
        public static let touchIDNotAvailable = Code.biometryNotAvailable
        public static let touchIDNotEnrolled = Code.biometryNotEnrolled
        public static let touchIDLockout = Code.biometryLockout
        public static let watchNotAvailable = Code.companionNotAvailable
    }

    /// The code.
    public let code: Code
    /// What happened, in words.
    public let message: String

    /// Creates an error with a code and, optionally, a message.
    public init(_ code: Code, message: String? = nil) {
        self.code = code
        self.message = message ?? LAError.defaultMessage(code)
    }

    /// Reads an `NSError` of `LAErrorDomain` (as `canEvaluatePolicy` sets it).
    public init(_nsError error: NSError) {
        self.init(Code(rawValue: error.code) ?? .authenticationFailed, message: error.localizedDescription)
    }

    public static var errorDomain: String { LAErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var localizedDescription: String { message }
    public var description: String { "LAError.\(code) (\(code.rawValue)): \(message)" }

    public static func == (lhs: LAError, rhs: LAError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public static let authenticationFailed = Code.authenticationFailed
    public static let userCancel = Code.userCancel
    public static let userFallback = Code.userFallback
    public static let systemCancel = Code.systemCancel
    public static let passcodeNotSet = Code.passcodeNotSet
    public static let biometryNotAvailable = Code.biometryNotAvailable
    public static let biometryNotEnrolled = Code.biometryNotEnrolled
    public static let biometryLockout = Code.biometryLockout
    public static let appCancel = Code.appCancel
    public static let invalidContext = Code.invalidContext
    public static let companionNotAvailable = Code.companionNotAvailable
    public static let notInteractive = Code.notInteractive

    static func defaultMessage(_ code: Code) -> String {
        switch code {
        case .authenticationFailed: "Authentication failed."
        case .userCancel: "Canceled by user."
        case .userFallback: "Fallback authentication mechanism selected."
        case .systemCancel: "Canceled by the system."
        case .passcodeNotSet: "Passcode not set."
        case .biometryNotAvailable: "Biometry is not available on this device."
        case .biometryNotEnrolled: "No identities are enrolled."
        case .biometryLockout: "Biometry is locked out."
        case .appCancel: "Canceled by another authentication."
        case .invalidContext: "Invalidated context."
        case .companionNotAvailable: "No companion device available."
        case .biometryNotPaired: "No paired biometric accessory."
        case .biometryDisconnected: "The biometric accessory is disconnected."
        case .invalidDimensions: "Invalid dimensions."
        case .notInteractive: "User interaction is required."
        }
    }
}

extension LAError.Code {
    /// Lets `catch LAError.userCancel` match.
    public static func ~= (code: LAError.Code, error: any Error) -> Bool {
        (error as? LAError)?.code == code
    }
}

/// A pointer to an optional `NSError`, as `canEvaluatePolicy(_:error:)` takes it
/// (`var error: NSError?` … `error: &error`).
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

extension LAError {
    /// The error of the same name as why the keychain's authentication did not succeed.
    init(_ failure: OwnerAuthenticationFailure, message: String) {
        let code: Code =
            switch failure {
            case .authenticationFailed: .authenticationFailed
            case .userCancel: .userCancel
            case .userFallback: .userFallback
            case .appCancel: .appCancel
            case .passcodeNotSet: .passcodeNotSet
            case .biometryNotAvailable: .biometryNotAvailable
            case .biometryNotEnrolled: .biometryNotEnrolled
            case .biometryLockout: .biometryLockout
            case .notInteractive: .notInteractive
            }
        self.init(code, message: message)
    }
}
