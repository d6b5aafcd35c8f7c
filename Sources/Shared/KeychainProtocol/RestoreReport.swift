/// What a restore did, item by item (``KeychainRequest/finishRestore``).
public struct RestoreReport: Sendable, Hashable {
    /// Items that were not in the keychain and now are.
    public var added: Int
    /// Items the keychain held (same primary key) that the backup's copy replaced: it was newer,
    /// or the restore was asked to replace.
    public var replaced: Int
    /// Items the keychain held and kept, its copy being as new as the backup's or newer.
    public var kept: Int
    /// Items sealed to the device that made the backup, which is not this one: they stay behind.
    public var fromAnotherDevice: Int

    /// Creates a report.
    public init(added: Int, replaced: Int, kept: Int, fromAnotherDevice: Int) {
        self.added = added
        self.replaced = replaced
        self.kept = kept
        self.fromAnotherDevice = fromAnotherDevice
    }
}
