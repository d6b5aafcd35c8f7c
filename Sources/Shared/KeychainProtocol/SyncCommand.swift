/// What the owner asks of sync (``KeychainRequest/sync(_:)``, `keychainctl sync`; Docs/Sync.md).
public enum SyncCommand: Sendable, Hashable {
    /// Starts a circle on `remote` (a git remote: a URL, `user@host:path` or a path), with this
    /// device as its first member, named `deviceName`.
    case setUp(remote: String, deviceName: String)
    /// Asks to join the circle on `remote` as `deviceName`: a member approves, once the owner has
    /// compared the short code both show.
    case join(remote: String, deviceName: String)
    /// Confirms, on a device that asked to join, the short code the owner compared: the device
    /// of the circle that shows it is the one this device trusts to have approved it.
    case confirmJoin(code: String)
    /// Syncs now: fetches, applies what other devices wrote, publishes what this one changed.
    case now
    /// Where sync stands, without touching the remote.
    case status
    /// Approves the device asking to join whose short code, as the new device shows it, is
    /// `code`.
    case approve(code: String)
    /// The versions of synchronizable items that lost a conflict and are still kept on the
    /// remote, with their secrets (``SyncReport/kept``).
    case history
    /// Removes the device whose id starts with `device` from the circle, and starts a new sync
    /// key that it never gets.
    case removeDevice(String)
}

extension SyncCommand {
    /// The command's name in the audit log; never a remote's address, which may carry a token.
    public var auditName: String {
        switch self {
        case .setUp: "setup"
        case .join: "join"
        case .confirmJoin: "confirm join"
        case .now: "now"
        case .status: "status"
        case .approve: "approve"
        case .history: "history"
        case .removeDevice(let device): "remove device \(device)"
        }
    }
}
