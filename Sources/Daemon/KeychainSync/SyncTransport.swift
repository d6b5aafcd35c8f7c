import KeychainProtocol

/// What carries the circle's files between machines (Docs/Sync.md, "The remote"): a store the
/// person already has and someone else keeps running. It holds only what the records and the
/// device list already protect; nothing it does is trusted.
public protocol SyncTransport: Sendable {
    /// Every file of the remote as it is now, by path, and a token naming that state.
    func fetch() throws(KeychainError) -> SyncSnapshot

    /// Writes `changes` (a path and its new bytes, or nil to remove it) over the state `token`
    /// names, all of them or none.
    ///
    /// - Returns: `.published` with the new state's token, or `.moved` when the remote changed
    ///   since `token`: fetch again, and publish over that.
    func publish(_ changes: [String: [UInt8]?], over token: String) throws(KeychainError) -> PublishOutcome
}

/// The remote's files at one moment.
public struct SyncSnapshot: Sendable, Equatable {
    /// Every file, by its path under the remote's root.
    public var files: [String: [UInt8]]
    /// Names this state for ``SyncTransport/publish(_:over:)``; empty for a remote with nothing
    /// in it yet.
    public var token: String

    /// A snapshot.
    public init(files: [String: [UInt8]], token: String) {
        self.files = files
        self.token = token
    }
}

/// What became of a publish.
public enum PublishOutcome: Sendable, Equatable {
    /// The changes are on the remote, in the state this token names.
    case published(String)
    /// The remote moved on since the state the changes were made over; nothing was written.
    case moved
}
