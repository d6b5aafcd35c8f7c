import KeychainProtocol

/// A change the owner makes to the apps' entitlements (``Enclave/changeEntitlements(_:)``). The
/// caller checks that the owner asked and that the change is valid.
public enum EntitlementsChange: Sendable, Hashable {
    /// Lets `app` use the shared `group` (`granted`), or no longer.
    case grant(app: String, group: String, granted: Bool)
    /// Declares what `app` is, or removes its declaration (nil).
    case declare(app: String, AppDeclaration?)
}
