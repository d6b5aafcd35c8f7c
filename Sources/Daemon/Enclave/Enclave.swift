import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The only code that touches key material: the device secret, the passcode, the keybag and its
/// class keys, the lock state, the attempt counter, and the sealing and opening of items.
///
/// Its interface is message-shaped (seal this item, open this item's secret, unlock with this
/// passcode) so that it can move into its own process or onto a TPM without changing callers.
/// Nothing it returns is a key. The messages, by subject:
///
/// - Items: ``seal(attributes:secret:binding:applicationPassword:)``,
///   ``openAttributes(_:binding:row:decode:)``, ``openSecret(_:binding:grants:applicationPassword:)``,
///   ``indexHasher()``, within one ``inItemRequest(_:)``.
/// - Enclave keys: ``makeEnclaveKey(accessibility:accessControl:accessGroup:)``,
///   ``useEnclaveKey(_:_:callerGroups:grants:)``.
/// - Passcode and lock: ``status()``, ``lock()``, ``unlock(passcode:)``,
///   ``setPasscode(current:new:)``, ``removePasscode(current:beforeCommit:)``,
///   ``setEraseAfterFailedAttempts(_:passcode:)``, ``verifyPasscode(_:)``, ``erase(passcode:)``.
/// - Biometry: ``biometryReport(sensorFingers:)``, ``evaluate(_:)``,
///   ``simulatedTouch(matching:finger:)``, ``changeSimulatedSensor(_:passcode:)``.
/// - The owner's decisions: ``entitlements()``, ``changeEntitlements(_:)``.
/// - The database's place beside the keybag: ``bindDatabase(inspect:stamp:)``,
///   ``recordDatabaseCommit(generation:)``, and the row ledger's tags (`RowLedgerAuthority`).
/// - Backups: ``makeBackupWriter(password:)``, ``makeBackupReader(password:)``,
///   ``sealForThisDevice(_:binding:attributes:)``, ``openSealedForThisDevice(_:)``.
/// - How the device secret is kept: ``deviceSecretProtection()``.
///
/// Files, in the keychain directory (``KeychainDirectory``: checked, mode 0700, opened by
/// descriptor): `device-secret` (mode 0600, 32 random bytes), or `device-secret.tpm` (the same
/// sealed to a TPM, ``DeviceSecret``), and, each authenticated with a
/// device-derived key, `keybag` (wrapped class keys, passcode parameters, the database's
/// identity), `attempts` (the failed-attempt counter), `biometry`, `database-state` (the
/// database's last durable generation); `enclave.lock` serialises processes.
public final class Enclave: Sendable {
    /// The keychain directory.
    let files: KeychainDirectory
    let deviceKey: SymmetricKey
    /// The TPM's counter of the database's generation, when a TPM seals the device secret.
    let rollbackCounter: RollbackCounter?
    /// What authenticates the database-state records (``DatabaseRecord``), keyed once.
    let databaseRecordAuthenticator: DatabaseRecord.Authenticator
    let clock: any EnclaveClock
    let cache: any ClassKeyCache
    let makePasscodeKDF: @Sendable () -> PasscodeKDF
    let passcodeLimits: PasscodeKDF.Limits
    let lockTimeout: Double
    private let keybagCache = Mutex<(stamp: FileStamp, keybag: Keybag)?>(nil)
    /// The current keybag's class-key cache names and sealing key.
    private let cacheContext = Mutex<ClassKeyCacheContext?>(nil)
    let openedClassKeys = OpenedClassKeys()

    /// The name of the database file the Enclave keeps its records about.
    static let databaseFileName = KeychainPaths.databaseFileName
    /// The file processes take turns on (`flock`) before they change the Enclave's state.
    static let lockName = KeychainPaths.enclaveLockName

    /// Checks the database's files (`keychain.db`, its WAL and shared memory) as the Enclave's
    /// own: regular files of this user that nobody else can write, never links.
    func checkDatabaseFiles() throws(KeychainError) {
        for suffix in ["", "-wal", "-shm"] { try files.checkFile(Self.databaseFileName + suffix) }
    }

    /// Opens the enclave whose state lives in `directory`, creating the device secret and a
    /// keybag without passcode when the keychain is new.
    ///
    /// Nothing is ever made anew beside existing state: a missing device secret or keybag next
    /// to other keychain files is refused, so that no item is ever silently lost.
    ///
    /// - Parameters:
    ///   - directory: the keychain directory (``KeychainDirectory`` checks it and its parents).
    ///   - clock: the boot clock that times passcode delays.
    ///   - cache: where unlocked class keys live between unlock and lock.
    ///   - passcodeKDF: makes the KDF parameters for a new passcode; by default calibrated to
    ///     about 100 ms on this machine.
    ///   - passcodeLimits: the least cost and most memory a keybag may ask for.
    ///   - creating: create a new keychain when none exists; when false, a missing keychain is
    ///     `errSecNoSuchKeychain` and nothing is written.
    ///   - lockTimeout: how long to wait for another process holding `enclave.lock`.
    ///   - tpm: the TPM that seals the device secret (``DeviceSecret``); nil keeps it in a file.
    /// - Throws: `errSecNoSuchKeychain` (see `creating`); `errSecInvalidKeychain` when the
    ///   directory or a file could have been planted or redirected by another user;
    ///   `errSecNotAvailable` when the device secret of an existing keychain is missing;
    ///   `errSecDecode` for an altered, foreign or missing keybag; `errSecIO` when the
    ///   directory cannot be used or another process holds the lock too long.
    public init(
        directory: URL, clock: any EnclaveClock = SystemEnclaveClock(), cache: any ClassKeyCache,
        passcodeKDF: @escaping @Sendable () -> PasscodeKDF = { PasscodeKDF.calibrated() },
        passcodeLimits: PasscodeKDF.Limits = .standard, creating: Bool = true, lockTimeout: Double = 20,
        tpm: TrustedPlatformModule? = nil
    ) throws(KeychainError) {
        let files = try KeychainDirectory(directory, creating: creating)
        self.files = files
        self.clock = clock
        self.cache = cache
        self.makePasscodeKDF = passcodeKDF
        self.passcodeLimits = passcodeLimits
        self.lockTimeout = lockTimeout
        (deviceKey, rollbackCounter) = try files.withExclusiveLock(Self.lockName, timeout: lockTimeout) {
            () throws(KeychainError) in
            // A crash during an atomic write leaves a temporary (a keybag's holds class keys
            // wrapped under a passcode that was never set): none is needed, nobody writes now.
            files.removeLeftoverTemporaries()
            let databaseHasContent = try (files.size(Self.databaseFileName) ?? 0) > 0
            let keybagExists = files.exists(Keybag.fileName)
            let (deviceKey, counter) = try DeviceSecret.load(
                files, otherStateExists: keybagExists || databaseHasContent || files.exists(DatabaseRecord.fileName),
                creating: creating, tpm: tpm)
            if try Keybag.load(files, deviceKey: deviceKey, limits: passcodeLimits) != nil {
                // Authentic and within limits: this keychain opens.
            } else if databaseHasContent || files.exists(DatabaseRecord.fileName) {
                throw KeychainError(
                    .errSecDecode,
                    "the keybag \(files.path(Keybag.fileName)) is missing, but \(files.path(Self.databaseFileName)) "
                        + "holds the keychain's items, which cannot be decrypted without it; nothing was changed. "
                        + "Restore the keybag from where it was, or erase the keychain with `keychainctl erase`"
                )
            } else if creating {
                try Keybag.fresh(deviceKey: deviceKey).save(files, deviceKey: deviceKey)
            } else {
                throw KeychainError(.errSecNoSuchKeychain, "no keychain exists at \(files.url.path) yet")
            }
            return (deviceKey, counter)
        }
        databaseRecordAuthenticator = DatabaseRecord.Authenticator(deviceKey: deviceKey)
    }

    /// Runs `body` holding `enclave.lock`, for the server's steps that must not interleave
    /// with another process's (opening the database against the keybag's records).
    func withStateLock<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        try files.withExclusiveLock(Self.lockName, timeout: lockTimeout, body)
    }

    /// The identity of the current keybag; it changes when the keychain is erased.
    func keychainID() throws(KeychainError) -> String {
        try keybag().keychainID
    }

    // MARK: Keybag access

    func keybag() throws(KeychainError) -> Keybag {
        let stamp = files.stamp(Keybag.fileName)
        if let stamp, let cached = keybagCache.withLock({ $0 }), cached.stamp == stamp {
            return cached.keybag
        }
        guard let keybag = try Keybag.load(files, deviceKey: deviceKey, limits: passcodeLimits) else {
            throw KeychainError(
                .errSecDecode,
                "the keybag \(files.path(Keybag.fileName)) is missing; the keychain cannot be opened. Restore it "
                    + "from where it was, or erase the keychain with `keychainctl erase`"
            )
        }
        if let stamp { keybagCache.withLock { $0 = (stamp, keybag) } }
        return keybag
    }

    func save(_ keybag: Keybag) throws(KeychainError) {
        try keybag.save(files, deviceKey: deviceKey)
        keybagCache.withLock { $0 = nil }
    }

    func loadAttempts(_ keybag: Keybag) throws(KeychainError) -> (attempts: PasscodeAttempts, tampered: Bool) {
        try PasscodeAttempts.load(files, deviceKey: deviceKey, passcodeSet: keybag.passcode != nil)
    }

    func saveAttempts(_ attempts: PasscodeAttempts) throws(KeychainError) {
        try attempts.save(files, deviceKey: deviceKey)
    }

    /// The kernel-keyring entry of `protectionClass`'s key in `keybag`'s keychain.
    func cacheName(_ protectionClass: ProtectionClass, _ keybag: Keybag) -> String {
        cacheContext(keybag).name(protectionClass)
    }

    /// `keybag`'s keychain's cache names and sealing key, derived once per keychain.
    private func cacheContext(_ keybag: Keybag) -> ClassKeyCacheContext {
        if let context = cacheContext.withLock({ $0 }), context.keychainID == keybag.keychainID { return context }
        let context = ClassKeyCacheContext(keychainID: keybag.keychainID, deviceKey: deviceKey)
        cacheContext.withLock { $0 = context }
        return context
    }

    /// Removes a class's entry from the cache (its class locks, in every process that shares
    /// the cache) and forgets the keys this process opened from it.
    func removeCachedClassKey(_ name: String) {
        cache.remove(name)
        openedClassKeys.forget(name)
    }

    /// Puts unlocked class keys in the cache, sealed by a device-derived key (AAD: the entry's
    /// name, so entries cannot be swapped between classes). Keys a lock kept for a touch are
    /// dropped: the passcode unlocked instead.
    func cacheClassKeys(_ keys: [ProtectionClass: SymmetricKey], _ keybag: Keybag) {
        dropKeysKeptForTouchUnlock(keybag)
        let context = cacheContext(keybag)
        for (protectionClass, key) in keys {
            let name = context.name(protectionClass)
            let sealed = key.withUnsafeBytes {
                try? AES.GCM.seal($0, using: context.sealingKey, authenticating: Data(name.utf8)).combined
            }
            if let sealed { cache.store(name, sealed) }
        }
    }

    /// The key of `protectionClass` if it is available now.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecNotAvailable`
    ///   for WhenPasscodeSet with no passcode set.
    func classKey(_ protectionClass: ProtectionClass) throws(KeychainError) -> SymmetricKey {
        try classKeys(protectionClass).classKey
    }

    /// The key of `protectionClass` and the keys derived from it, if it is available now.
    /// The cache (or, without a passcode, the keybag) is consulted at every call, so a lock by
    /// any process is seen at once; opening and deriving are done again only when the entry
    /// changed (``OpenedClassKeys``).
    ///
    /// Within an item request, each class is looked up once (``ItemRequestScope``).
    ///
    /// - Throws: as ``classKey(_:)``.
    func classKeys(_ protectionClass: ProtectionClass) throws(KeychainError) -> ClassKeySet {
        guard let scope = ItemRequestScope.current else { return try lookUpClassKeys(protectionClass) }
        return try scope.keys(self, protectionClass) { () throws(KeychainError) in try lookUpClassKeys(protectionClass)
        }
    }

    private func lookUpClassKeys(_ protectionClass: ProtectionClass) throws(KeychainError) -> ClassKeySet {
        let keybag = try checkedKeybag()
        if protectionClass == .whenPasscodeSet && keybag.passcode == nil {
            throw KeychainError(
                .errSecNotAvailable,
                "no device passcode is set, so items accessible WhenPasscodeSetThisDeviceOnly cannot exist; set "
                    + "one with `keychainctl passcode set`"
            )
        }
        let context = cacheContext(keybag)
        let name = context.name(protectionClass)
        if keybag.passcode == nil {
            // No passcode: class keys are wrapped by the device secret alone and always available.
            guard let wrapped = keybag.wrappedClassKeys[protectionClass] else {
                throw unopenableKeybagEntry(protectionClass)
            }
            return try openedClassKeys.keys(name, source: wrapped) { (_: Data) throws(KeychainError) -> SymmetricKey in
                guard
                    let key = keybag.unwrap(
                        protectionClass, with: keybag.deviceWrappingKey(deviceKey, for: protectionClass))
                else {
                    throw unopenableKeybagEntry(protectionClass)
                }
                return key
            }
        }
        guard let sealed = cache.load(name) else {
            openedClassKeys.forget(name)
            throw locked(protectionClass)
        }
        return try openedClassKeys.keys(name, source: sealed) { (sealed: Data) throws(KeychainError) -> SymmetricKey in
            guard let box = try? AES.GCM.SealedBox(combined: sealed),
                var bytes = try? AES.GCM.open(box, using: context.sealingKey, authenticating: Data(name.utf8))
            else { throw locked(protectionClass) }
            defer { bytes.resetBytes(in: 0..<bytes.count) }
            return SymmetricKey(data: bytes)
        }
    }

    /// The keybag, checked once per item request (``ItemRequestScope``).
    private func checkedKeybag() throws(KeychainError) -> Keybag {
        guard let scope = ItemRequestScope.current else { return try keybag() }
        return try scope.keybag(self) { () throws(KeychainError) in try keybag() }
    }

    private func locked(_ protectionClass: ProtectionClass) -> KeychainError {
        switch protectionClass {
        case .afterFirstUnlock:
            KeychainError(
                .errSecInteractionNotAllowed,
                "the keychain has not been unlocked since the machine started; unlock it with `keychainctl unlock`")
        case .whenUnlocked, .whenPasscodeSet:
            KeychainError(.errSecInteractionNotAllowed, "the keychain is locked; unlock it with `keychainctl unlock`")
        }
    }

    private func unopenableKeybagEntry(_ protectionClass: ProtectionClass) -> KeychainError {
        KeychainError(
            .errSecDecode,
            "the keybag entry for the \(protectionClass) class does not open with this device secret; the keybag "
                + "or device secret was replaced"
        )
    }
}
