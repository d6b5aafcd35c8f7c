/// What the owner asks of sync (``KeychainRequest/sync(_:)``, `keychainctl sync`; Docs/Sync.md).
public enum SyncCommand: Sendable, Hashable {
    /// Starts a circle on `remote` (a git remote: a URL, `user@host:path` or a path), with this
    /// device as its first member, named `deviceName`.
    case setUp(remote: String, deviceName: String)
    /// Asks to join the circle on `remote` as `deviceName`, with a commitment to this device's
    /// key and a nonce (Docs/Sync.md, "Joining"); on a device that asked already, asks again
    /// with a new nonce.
    case join(remote: String, deviceName: String)
    /// On a device that asked to join: once a member answered, reveals this device's nonce for
    /// that answer alone and returns the code to type on that member (the member's
    /// ``SyncReport/Device/code``).
    case showJoinCode
    /// Confirms, on a device that asked to join, the code the member approved it with: the
    /// member whose answer gave that code is the one this device trusts to have approved it.
    case confirmJoin(code: String)
    /// Syncs now: fetches, applies what other devices wrote, publishes what this one changed.
    case now
    /// Where sync stands, without touching the remote.
    case status
    /// Answers, with a fresh nonce, the request of the device asking to join whose id starts
    /// with `device` (nil: the only one asking); this device's earlier open answer is dropped.
    case answer(device: String?)
    /// Approves the device whose request this device answered last, if the code computed with
    /// its revealed nonce is `code`, the one the new device shows.
    case approve(code: String)
    /// The versions of synchronizable items that lost a conflict and are still kept on the
    /// remote, with their secrets (``SyncReport/kept``).
    case history
    /// Removes the device whose id starts with `device` from the circle, and starts a new sync
    /// key that it never gets.
    case removeDevice(String)
    /// After the circle's history forked, follows one branch again: this device's lists
    /// (`keepThisDevices`), put back on the remote, or the remote's, from the last version both
    /// share.
    case pickBranch(keepThisDevices: Bool)
}

extension SyncCommand {
    /// The command's name in the audit log; never a remote's address, which may carry a token.
    public var auditName: String {
        switch self {
        case .setUp: "setup"
        case .join: "join"
        case .showJoinCode: "show join code"
        case .confirmJoin: "confirm join"
        case .now: "now"
        case .status: "status"
        case .answer: "answer"
        case .approve: "approve"
        case .history: "history"
        case .removeDevice(let device): "remove device \(device)"
        case .pickBranch(let keep): keep ? "pick branch: keep" : "pick branch: take"
        }
    }
}
