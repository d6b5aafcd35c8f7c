import Foundation

/// One part of a backup file as the keychain makes it (``KeychainRequest/beginBackup(password:)``
/// and ``KeychainRequest/continueBackup``), and how far the backup has come.
public struct BackupPart: Sendable, Hashable {
    /// The file's next bytes: the header in the first part, sealed chunks after it.
    public var bytes: Data
    /// Items looked at so far.
    public var done: Int
    /// Items the keychain held when the backup began.
    public var total: Int
    /// On the last part only: what the file holds.
    public var summary: BackupSummary?

    /// Creates a part.
    public init(bytes: Data, done: Int, total: Int, summary: BackupSummary? = nil) {
        self.bytes = bytes
        self.done = done
        self.total = total
        self.summary = summary
    }
}
