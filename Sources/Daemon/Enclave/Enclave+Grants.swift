import Crypto
import Foundation
import KeychainProtocol

/// Authentication grants: issued here after a match or a passcode check, checked here before
/// an access-controlled item's key is unwrapped.
extension Enclave {
    /// The longest a grant stays usable: Apple's maximum reuse duration.
    static let grantLifetime: Double = 300

    private func grantKey() -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain grant v1".utf8), outputByteCount: 32)
    }

    func issueGrant(_ factor: AuthenticationFactor, domainState: Data?) -> AuthenticationGrant {
        let unsigned = AuthenticationGrant(
            factor: factor, domainState: domainState, bootID: clock.bootID, issuedAt: clock.uptime(),
            nonce: Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }), tag: Data())
        let tag = Data(HMAC<SHA256>.authenticationCode(for: unsigned.taggedBytes, using: grantKey()))
        return AuthenticationGrant(
            factor: factor, domainState: domainState, bootID: unsigned.bootID, issuedAt: unsigned.issuedAt,
            nonce: unsigned.nonce, tag: tag)
    }

    /// The grants that are genuine, from this boot, and younger than ``grantLifetime``.
    func validGrants(_ grants: [AuthenticationGrant]) -> [AuthenticationGrant] {
        let key = grantKey()
        let now = clock.uptime()
        let boot = clock.bootID
        return grants.filter { grant in
            HMAC<SHA256>.isValidAuthenticationCode(grant.tag, authenticating: grant.taggedBytes, using: key)
                && grant.bootID == boot && now - grant.issuedAt <= Self.grantLifetime && now >= grant.issuedAt
        }
    }

    /// Checks that `grants` satisfy an item's access control.
    ///
    /// - Throws: errSecInteractionNotAllowed carrying the access control when they do not (the
    ///   client may authenticate and retry); errSecAuthFailed for a biometryCurrentSet item
    ///   whose enrolled set has changed (permanently unusable).
    func authorize(_ stored: StoredAccessControl, grants: [AuthenticationGrant]) throws(KeychainError) {
        guard stored.control.requiresAuthentication else { return }
        var valid = validGrants(grants)
        if stored.control.requiresCurrentBiometrySet {
            // Only matches against the set enrolled when the item was made count.
            valid.removeAll { $0.factor == .biometry && $0.domainState != stored.enrolledState }
        }
        let constraintsMet = stored.control.isSatisfied(by: Set(valid.map(\.factor)))
        guard constraintsMet else {
            throw KeychainError(
                status: KeychainError.errSecInteractionNotAllowed.status,
                message:
                    "the item requires the device owner to authenticate (its access control); the call was made "
                    + "without a prompt",
                requiredAuthentication: stored.control)
        }
    }
}
