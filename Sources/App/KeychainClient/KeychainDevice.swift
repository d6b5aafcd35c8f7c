import Foundation

/// The device's data protection: passcode, lock state and failed-attempt counter, as
/// `keychainctl` manages them.
///
/// For example:
///
/// ```swift
/// try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
/// try KeychainDevice.lock()
/// try KeychainDevice.unlock(passcode: SecretBytes(utf8: "correct horse"))
/// ```
public enum KeychainDevice {
    /// The current protection state.
    public static func status() throws(KeychainError) -> DeviceStatus {
        guard case .status(let status) = try ProcessKeychain.perform(.deviceStatus) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a status request with something else")
        }
        return status
    }

    /// Drops the keys of WhenUnlocked and WhenPasscodeSet items until the next unlock.
    public static func lock() throws(KeychainError) {
        _ = try ProcessKeychain.perform(.lock)
    }

    /// Unlocks with the passcode.
    ///
    /// - Throws: `errSecAuthFailed` (-25293) for a wrong passcode, `errSecInteractionNotAllowed`
    ///   (-25308) while a delay after failed attempts runs.
    public static func unlock(passcode: SecretBytes) throws(KeychainError) {
        _ = try ProcessKeychain.perform(.unlock(passcode: passcode))
    }

    /// Unlocks with the passcode the owner types on the keychain's own sheet, which says
    /// `reason` under this program's name: the passcode never enters this process
    /// (``KeychainSheet``).
    ///
    /// With no passcode set nothing is locked, and it returns at once, asking nothing.
    ///
    /// - Throws: errSecUserCanceled (-128) when the owner cancels, errSecInteractionNotAllowed
    ///   (-25308) when no sheet can be shown.
    public static func unlock(reason: String) throws(KeychainError) {
        try KeychainSheet.perform(.unlockBySheet(KeychainSheet.authentication(.passcode, reason: reason)))
    }

    /// Sets the passcode (`current` nil when none is set) or changes it.
    public static func setPasscode(current: SecretBytes?, new: SecretBytes) throws(KeychainError) {
        _ = try ProcessKeychain.perform(.setPasscode(current: current, new: new))
    }

    /// Removes the passcode; deletes every WhenPasscodeSetThisDeviceOnly item.
    public static func removePasscode(current: SecretBytes) throws(KeychainError) {
        _ = try ProcessKeychain.perform(.removePasscode(current: current))
    }

    /// Turns erasing every item after 10 consecutive failed passcode attempts on or off.
    public static func setEraseAfterFailedAttempts(_ enabled: Bool, passcode: SecretBytes) throws(KeychainError) {
        _ = try ProcessKeychain.perform(.setEraseAfterFailedAttempts(enabled, passcode: passcode))
    }
}

extension KeychainDevice {
    /// How many items the keychain holds, of one accessibility or of any. Nothing is decrypted.
    public static func itemCount(accessibility: Accessibility? = nil) throws(KeychainError) -> Int {
        guard case .count(let count) = try ProcessKeychain.perform(.countItems(accessibility: accessibility)) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a count with something else")
        }
        return count
    }

    /// Erases every item and class key; needs the passcode when one is set. Returns how many
    /// items were erased.
    public static func erase(passcode: SecretBytes?) throws(KeychainError) -> Int {
        guard case .count(let count) = try ProcessKeychain.perform(.erase(passcode: passcode)) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered an erase with something else")
        }
        return count
    }

    /// Removes the files of a keychain that cannot be opened (its files do not belong together,
    /// or one is missing or altered): the way out the errors name besides restoring the files.
    /// Returns how many items the database held, when it could tell.
    ///
    /// - Throws: `errSecParam` when the keychain opens (erase it with ``erase(passcode:)``).
    public static func eraseUnopenableKeychain() throws(KeychainError) -> Int? {
        if case .count(let count) = try ProcessKeychain.perform(.eraseUnopenableKeychain) { return count }
        return nil
    }
}
