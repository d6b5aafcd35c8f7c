/// What a backup holds, by Apple's rules for encrypted backups (Docs/Backup.md).
public struct BackupSummary: Sendable, Hashable {
    /// Items that come back on any device: accessible WhenUnlocked, AfterFirstUnlock or Always,
    /// without an access control.
    public var migratable: Int
    /// `…ThisDeviceOnly` items and items with an access control, sealed under this device's
    /// key: they come back only on this device.
    public var thisDeviceOnly: Int
    /// Items that never leave: WhenPasscodeSetThisDeviceOnly, Enclave keys, and items sealed
    /// under an app's password (which the keychain never holds).
    public var leftOut: Int

    /// Creates a summary.
    public init(migratable: Int, thisDeviceOnly: Int, leftOut: Int) {
        self.migratable = migratable
        self.thisDeviceOnly = thisDeviceOnly
        self.leftOut = leftOut
    }
}
