import KeychainProtocol

/// Sync across the owner's devices (Docs/Sync.md), as `keychainctl sync` runs it: the caller
/// must be the owner (through keychaind, in an owner session).
///
/// ```swift
/// let report = try KeychainDevice.sync(.setUp(remote: "git@host:me/keychain.git", deviceName: "laptop"))
/// print(report.members.map(\.name))
/// ```
extension KeychainDevice {
    /// Runs a sync command; returns where sync stands after it.
    ///
    /// - Throws: `errSecMissingEntitlement` outside an owner session; `errSecIO` when the remote
    ///   cannot be reached; `errSecInteractionNotAllowed` while the keychain is locked.
    public static func sync(_ command: SyncCommand) throws(KeychainError) -> SyncReport {
        guard case .sync(let report) = try ProcessKeychain.perform(.sync(command)) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a sync command with something else")
        }
        return report
    }
}
