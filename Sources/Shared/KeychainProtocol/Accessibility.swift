/// When an item's data can be read: the values of `kSecAttrAccessible`, with Apple's raw strings.
///
/// The deprecated `always` values are accepted and protected as Apple's deprecation notice says
/// to use instead: `always` as `afterFirstUnlock`, `alwaysThisDeviceOnly` as
/// `afterFirstUnlockThisDeviceOnly`. The item keeps the value it was given, so queries for it
/// still match.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/restricting-keychain-item-accessibility>
public enum Accessibility: String, Sendable, CaseIterable, Codable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case whenPasscodeSetThisDeviceOnly = "akpu"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"
    case always = "dk"
    case alwaysThisDeviceOnly = "dku"

    /// The protection class whose key protects items of this accessibility.
    public var protectionClass: ProtectionClass {
        switch self {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly: .whenUnlocked
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly, .always, .alwaysThisDeviceOnly: .afterFirstUnlock
        case .whenPasscodeSetThisDeviceOnly: .whenPasscodeSet
        }
    }

    /// True for the `…ThisDeviceOnly` values: such items never leave this device (no backup
    /// migration, no sync).
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
            .alwaysThisDeviceOnly:
            true
        case .whenUnlocked, .afterFirstUnlock, .always: false
        }
    }
}

/// A key class of the keybag. The `ThisDeviceOnly` accessibility values share their class's key;
/// they differ only in never being exported (DESIGN.md, Data protection).
public enum ProtectionClass: String, Sendable, CaseIterable, Codable {
    /// Available only while the keychain is unlocked.
    case whenUnlocked
    /// Available from the first unlock until the keys are dropped (reboot, or daemon stop).
    case afterFirstUnlock
    /// Like `whenUnlocked`, and exists only while a passcode is set.
    case whenPasscodeSet
}
