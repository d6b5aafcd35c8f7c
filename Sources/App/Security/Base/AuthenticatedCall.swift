import Foundation
import KeychainClient
import KeychainProtocol
import LocalAuthentication

/// How a call may authenticate: `kSecUseAuthenticationContext`, `kSecUseOperationPrompt`,
/// `kSecUseAuthenticationUI` / `kSecUseNoAuthenticationUI`. Package-wide, not public: this
/// module exports Apple's names only.
package struct AuthenticationOptions: Sendable {
    /// The context to authenticate with (and reuse); a new one per call when nil.
    package var context: LAContext?
    /// The prompt's reason (`kSecUseOperationPrompt`).
    package var reason: String?
    /// `kSecUseAuthenticationUI`.
    package var interface = AuthenticationInterface.allow

    /// Options for a call.
    package init(context: LAContext? = nil, reason: String? = nil, interface: AuthenticationInterface = .allow) {
        self.context = context
        self.reason = reason
        self.interface = interface
    }
}

extension ProcessKeychain {
    /// Performs a request, authenticating the device owner when an item's access control asks
    /// for it (the typed form of what the SecItem functions do).
    ///
    /// - Throws: errSecUserCanceled, errSecAuthFailed, errSecInteractionNotAllowed as
    ///   `LAContext` authentication ends, or the request's own errors.
    package static func perform(
        _ request: KeychainRequest, authenticating options: AuthenticationOptions
    ) throws(KeychainError) -> KeychainReply {
        try AuthenticatedCall.perform(options) { request.with($0) }
    }
}

extension KeychainRequest {
    /// This request carrying `material` (the context for queries, the app password for all).
    func with(_ material: AuthenticationMaterial) -> KeychainRequest {
        switch self {
        case .add(var item):
            item.applicationPassword = material.applicationPassword ?? item.applicationPassword
            return .add(item)
        case .copyMatching(let query): return .copyMatching(query.with(material))
        case .update(let query, let changes): return .update(query.with(material), changes)
        case .useEnclaveKey(var use):
            use.authenticationContext = material.context ?? use.authenticationContext
            return .useEnclaveKey(use)
        default: return self
        }
    }
}

/// What a request carries to satisfy access control: the name of the context whose
/// evaluations the server may count (never a grant: those stay in the server), and the app's
/// password.
struct AuthenticationMaterial {
    var context: AuthenticationContextID?
    var applicationPassword: SecretBytes?
}

/// Runs a keychain request; when the Enclave answers that an item needs the owner to
/// authenticate, shows the prompt through the call's context (a new one when the call gave none,
/// as on iOS) and retries naming that context. The server and the Enclave, not this code, decide
/// whether what it earned suffices.
enum AuthenticatedCall {
    static func perform(
        _ options: AuthenticationOptions, _ request: (AuthenticationMaterial) -> KeychainRequest
    ) throws(KeychainError) -> KeychainReply {
        var material = AuthenticationMaterial(
            context: options.context?.identifier, applicationPassword: options.context?.credential(.applicationPassword)
        )
        var context = options.context
        // Two rounds cover `.and` items whose factors come from separate evaluations.
        for _ in 0..<3 {
            do {
                return try ProcessKeychain.perform(request(material))
            } catch {
                guard let required = error.requiredAuthentication else { throw error }
                guard options.interface == .allow else {
                    throw KeychainError(
                        .errSecInteractionNotAllowed,
                        "the item needs the device owner to authenticate and this call may not prompt "
                            + "(kSecUseAuthenticationUIFail, kSecUseNoAuthenticationUI or interactionNotAllowed)"
                    )
                }
                if required.flags.contains(.applicationPassword) && material.applicationPassword == nil {
                    throw KeychainError(
                        .errSecInteractionNotAllowed,
                        "the item is protected by an application password; give it with "
                            + "LAContext.setCredential(_:type: .applicationPassword) and kSecUseAuthenticationContext"
                    )
                }
                let authenticating = context ?? LAContext()
                context = authenticating
                try authenticating.authenticate(for: required, reason: options.reason ?? "")
                material.context = authenticating.identifier
            }
        }
        throw KeychainError(.errSecAuthFailed, "the authentication did not satisfy the item's access control")
    }
}
