import Foundation
import KeychainProtocol
import KeychainSupport

/// Erasing: the owner's explicit request, the tenth failed passcode with erase turned on, and
/// the removal of the files of a keychain that cannot be opened. These, and removing the
/// passcode, are the only ways items are ever deleted wholesale.
extension Enclave {
    /// Erases the keychain on the owner's request: checks the passcode when one is set (counted
    /// like an unlock), then destroys every class key (see ``erase(_:)``). The server then
    /// deletes the erased keychain's rows (``bindDatabase(inspect:stamp:)``).
    ///
    /// - Throws: as ``unlock(passcode:)``; `errSecParam` when a passcode is set and none is
    ///   given.
    public func erase(passcode: SecretBytes?) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            let keybag = try keybag()
            if keybag.passcode != nil {
                guard let passcode else {
                    throw KeychainError(.errSecParam, "a passcode is set; erasing the keychain needs it")
                }
                _ = try verify(passcode, keybag)
            }
            try erase(keybag)
        }
    }

    /// Destroys every class key by writing a fresh keybag with a new keychain identity, which
    /// records the erased identity so that the server deletes the old rows (they can never be
    /// opened again); resets the attempt counter, the biometric state and the unlocked keys, and
    /// removes the sync state (its identity key is gone with the keys: a state left behind
    /// failed every later sync with errSecDecode and refused a new setup).
    /// The keys go first, so a crash before the rows are deleted still leaves them unreadable,
    /// and the next open finishes the erase. Must run under the enclave lock.
    func erase(_ old: Keybag) throws(KeychainError) {
        for protectionClass in ProtectionClass.allCases { removeCachedClassKey(cacheName(protectionClass, old)) }
        dropKeysKeptForTouchUnlock(old)
        try save(
            Keybag.fresh(deviceKey: deviceKey, databaseCreated: old.databaseCreated, erasedKeychainID: old.keychainID))
        try saveAttempts(PasscodeAttempts())
        try files.remove(BiometryState.fileName)
        try files.remove(Self.syncStateFileName)
        try files.remove(Self.syncRunningFileName)
        try files.remove(Self.syncForkFileName)
        files.syncDirectory()
    }

    /// Removes the files of a keychain that cannot be opened, holding `enclave.lock`: the keybag
    /// first, then the other state files and `also` (the database's). The device secret stays,
    /// unless it is sealed to a TPM and does not unseal on `tpm` (another machine's, or a TPM
    /// cleared since): it could never open here, and a new keychain needs a secret of its own.
    /// The directory is checked as for any open, so files another user could have planted are
    /// never touched.
    public static func removeFiles(
        in directory: URL, also: [String], tpm: TrustedPlatformModule? = nil, lockTimeout: Double = 20
    ) throws(KeychainError) {
        let files = try KeychainDirectory(directory, creating: false)
        try files.withExclusiveLock(lockName, timeout: lockTimeout) { () throws(KeychainError) in
            for name in [
                Keybag.fileName, DatabaseRecord.fileName, PasscodeAttempts.fileName, BiometryState.fileName,
                syncStateFileName, syncRunningFileName, syncForkFileName,
            ] + also
            {
                try files.remove(name)
            }
            if let tpm, let sealed = try files.read(SealedDeviceSecret.fileName),
                (try? SealedDeviceSecret.open(sealed, path: files.path(SealedDeviceSecret.fileName), with: tpm)) == nil
            {
                try files.remove(SealedDeviceSecret.fileName)
            }
            files.removeLeftoverTemporaries()
            files.syncDirectory()
        }
    }
}
