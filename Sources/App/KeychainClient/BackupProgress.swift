/// How far a backup or a restore has come (``KeychainDevice/backup(to:password:progress:)``,
/// ``KeychainDevice/restore(from:password:replacing:progress:)``).
public struct BackupProgress: Sendable, Hashable {
    /// Items written to the file, or read from it, so far.
    public var items: Int
    /// The share of the work done, from 0 to 1: of the keychain's items for a backup, of the
    /// file's bytes for a restore.
    public var fraction: Double

    /// Creates a progress report.
    public init(items: Int, fraction: Double) {
        self.items = items
        self.fraction = fraction
    }
}
