/// The device's protection state, as `keychainctl status` shows it.
public struct DeviceStatus: Sendable, Hashable {
    /// True when a device passcode is set.
    public var passcodeSet: Bool
    /// The protection classes whose keys are available now.
    public var unlockedClasses: Set<ProtectionClass>
    /// Consecutive failed passcode attempts (reset by a correct passcode).
    public var failedAttempts: Int
    /// Seconds until the next passcode attempt is allowed; 0 when one is allowed now.
    public var secondsUntilNextAttempt: Double
    /// True when 10 failed attempts erase every item.
    public var eraseAfterFailedAttempts: Bool
    /// Why sync publishes nothing until the owner acts, when it does not: the circle's history
    /// forked (Docs/Sync.md, "The circle of devices").
    public var syncStopped: String?

    /// Creates a status.
    public init(
        passcodeSet: Bool, unlockedClasses: Set<ProtectionClass>, failedAttempts: Int,
        secondsUntilNextAttempt: Double, eraseAfterFailedAttempts: Bool, syncStopped: String? = nil
    ) {
        self.syncStopped = syncStopped
        self.passcodeSet = passcodeSet
        self.unlockedClasses = unlockedClasses
        self.failedAttempts = failedAttempts
        self.secondsUntilNextAttempt = secondsUntilNextAttempt
        self.eraseAfterFailedAttempts = eraseAfterFailedAttempts
    }

    /// True when items that need the device unlocked can be read.
    public var isUnlocked: Bool { unlockedClasses.contains(.whenUnlocked) }
}
