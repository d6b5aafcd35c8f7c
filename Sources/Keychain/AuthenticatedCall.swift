import Foundation
import LocalAuth

/// How a call may authenticate: `kSecUseAuthenticationContext`, `kSecUseOperationPrompt`,
/// `kSecUseAuthenticationUI` / `kSecUseNoAuthenticationUI`.
struct AuthenticationOptions {
    enum Interface { case allow, fail, skip }

    var context: LAContext?
    var reason: String?
    var interface = Interface.allow
}

/// What a request carries to satisfy access control.
struct AuthenticationMaterial {
    var grants: [AuthenticationGrant] = []
    var applicationPassword: SecretBytes?
}

/// Runs a keychain request; when the Enclave answers that an item needs the owner to
/// authenticate, shows the prompt through the call's context (a new one when the call gave none,
/// as on iOS) and retries with the grants. The Enclave, not this code, decides whether they
/// suffice.
enum AuthenticatedCall {
    static func perform(_ options: AuthenticationOptions, _ request: (AuthenticationMaterial) -> KeychainRequest) throws(KeychainError) -> KeychainReply {
        var material = AuthenticationMaterial(
            grants: [], applicationPassword: options.context?.credential(.applicationPassword))
        var context = options.context
        // Two rounds cover `.and` items whose factors come from separate evaluations.
        for _ in 0..<3 {
            do {
                return try KeychainServices.perform(request(material))
            } catch {
                guard let required = error.requiredAuthentication else { throw error }
                guard options.interface == .allow else {
                    throw KeychainError(.errSecInteractionNotAllowed, "the item needs the device owner to authenticate and this call may not prompt (kSecUseAuthenticationUIFail, kSecUseNoAuthenticationUI or interactionNotAllowed)")
                }
                if required.flags.contains(.applicationPassword) && material.applicationPassword == nil {
                    throw KeychainError(.errSecInteractionNotAllowed, "the item is protected by an application password; give it with LAContext.setCredential(_:type: .applicationPassword) and kSecUseAuthenticationContext")
                }
                let authenticating = context ?? LAContext()
                context = authenticating
                material.grants = try authenticating.keychainGrants(for: required, reason: options.reason ?? "")
            }
        }
        throw KeychainError(.errSecAuthFailed, "the authentication did not satisfy the item's access control")
    }
}
