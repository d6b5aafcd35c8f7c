/// Whether a call may show the owner a prompt (`kSecUseAuthenticationUI`).
public enum AuthenticationInterface: Sendable {
    /// `kSecUseAuthenticationUIAllow`, the default: prompt when an item asks for it.
    case allow
    /// `kSecUseAuthenticationUIFail` (or `kSecUseNoAuthenticationUI`): an item that would prompt
    /// gives `errSecInteractionNotAllowed`.
    case fail
    /// `kSecUseAuthenticationUISkip`: items that would prompt are left out.
    case skip
}
