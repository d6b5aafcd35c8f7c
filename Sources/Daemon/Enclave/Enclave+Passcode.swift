import Crypto
import Foundation
import KeychainProtocol

extension Enclave {
    /// The shortest passcode accepted, in bytes (iOS asks for at least 4 digits).
    static let minimumPasscodeLength = 4

    /// The device's protection state.
    public func status() throws(KeychainError) -> DeviceStatus {
        let keybag = try keybag()
        // The first look after a reboot starts the delay period over; persist that start so
        // that later looks count down from it.
        let (attempts, remaining) = try withStateLock { () throws(KeychainError) in
            var (attempts, _) = try loadAttempts(keybag)
            let (remaining, restarted) = attempts.remainingDelay(clock: clock)
            if restarted { try saveAttempts(attempts) }
            return (attempts, remaining)
        }
        var unlocked = Set<ProtectionClass>()
        for protectionClass in ProtectionClass.allCases where (try? classKey(protectionClass)) != nil {
            unlocked.insert(protectionClass)
        }
        return DeviceStatus(
            passcodeSet: keybag.passcode != nil, unlockedClasses: unlocked, failedAttempts: attempts.failed,
            secondsUntilNextAttempt: remaining, eraseAfterFailedAttempts: keybag.eraseAfterFailedAttempts,
            syncStopped: syncFork())
    }

    /// Locks the keychain: drops the keys of WhenUnlocked and WhenPasscodeSet. AfterFirstUnlock
    /// keys stay until the machine restarts (or, in daemon mode, the daemon stops). Without a
    /// passcode there is nothing to lock with, and this does nothing. In keychaind, while
    /// biometry could serve, the dropped keys are kept for a touch (``unlock(touch:)``).
    public func lock() throws(KeychainError) {
        let keybag = try keybag()
        guard keybag.passcode != nil else { return }
        keepKeysForTouchUnlock(keybag)
        removeCachedClassKey(cacheName(.whenUnlocked, keybag))
        removeCachedClassKey(cacheName(.whenPasscodeSet, keybag))
    }

    /// Unlocks the keychain with the device passcode.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong passcode (counted; see ``PasscodeAttempts``),
    ///   `errSecInteractionNotAllowed` while a delay after failed attempts is running.
    public func unlock(passcode: SecretBytes) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            let keybag = try keybag()
            guard keybag.passcode != nil else { return }
            let keys = try verify(passcode, keybag)
            cacheClassKeys(keys, keybag)
        }
    }

    /// Sets the passcode (when none is set, `current` must be nil) or changes it.
    ///
    /// Setting a passcode creates the WhenPasscodeSet class and rewraps every class key under
    /// the new passcode; the keychain is unlocked afterwards.
    ///
    /// - Throws: `errSecParam` for a passcode shorter than ``minimumPasscodeLength`` or a
    ///   missing/unexpected current passcode, `errSecAuthFailed` for a wrong current passcode.
    public func setPasscode(current: SecretBytes?, new: SecretBytes) throws(KeychainError) {
        guard new.count >= Self.minimumPasscodeLength else {
            throw KeychainError(.errSecParam, "a passcode needs at least \(Self.minimumPasscodeLength) characters")
        }
        try withStateLock { () throws(KeychainError) in
            var keybag = try keybag()
            var keys: [ProtectionClass: SymmetricKey]
            if keybag.passcode != nil {
                guard let current else {
                    throw KeychainError(
                        .errSecParam, "a passcode is already set; give the current passcode to change it")
                }
                keys = try verify(current, keybag)
            } else {
                guard current == nil else {
                    throw KeychainError(.errSecParam, "no passcode is set, so there is no current passcode to give")
                }
                keys = try deviceWrappedKeys(keybag)
                keys[.whenPasscodeSet] = SymmetricKey(size: .bits256)
            }
            let parameters = makePasscodeKDF()
            let passcodeKey = try parameters.deriveKey(
                passcode: new, deviceKey: deviceKey, keychainID: keybag.keychainID)
            keybag.passcode = parameters
            keybag.wrappedClassKeys = try keybag.wrapped(keys) { [keybag] in
                keybag.passcodeWrappingKey(passcodeKey, for: $0)
            }
            try save(keybag)
            try saveAttempts(PasscodeAttempts())
            recordPasscodeEntry()
            cacheClassKeys(keys, keybag)
        }
    }

    /// Removes the passcode. Every class key is rewrapped by the device secret alone, and the
    /// WhenPasscodeSet class key is destroyed, so its items can never be read again.
    ///
    /// - Parameter beforeCommit: runs after the passcode is verified and before the class key is
    ///   destroyed; the server deletes the class's items there, so a crash in between leaves no
    ///   item whose key is gone.
    public func removePasscode(
        current: SecretBytes, beforeCommit: () throws(KeychainError) -> Void
    ) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            var keybag = try keybag()
            guard keybag.passcode != nil else { throw KeychainError(.errSecParam, "no passcode is set") }
            var keys = try verify(current, keybag)
            try beforeCommit()
            keys[.whenPasscodeSet] = nil
            let old = keybag
            keybag.passcode = nil
            keybag.eraseAfterFailedAttempts = false
            keybag.wrappedClassKeys = try keybag.wrapped(keys) { [keybag] in
                keybag.deviceWrappingKey(deviceKey, for: $0)
            }
            try save(keybag)
            for protectionClass in ProtectionClass.allCases { removeCachedClassKey(cacheName(protectionClass, old)) }
            dropKeysKeptForTouchUnlock(old)
        }
    }

    /// Turns "erase all items after 10 consecutive failed passcode attempts" on or off.
    public func setEraseAfterFailedAttempts(_ enabled: Bool, passcode: SecretBytes) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            var keybag = try keybag()
            guard keybag.passcode != nil else {
                throw KeychainError(.errSecParam, "erasing after failed attempts needs a passcode; set one first")
            }
            _ = try verify(passcode, keybag)
            keybag.eraseAfterFailedAttempts = enabled
            try save(keybag)
        }
    }

    // MARK: Verification

    private func deviceWrappedKeys(_ keybag: Keybag) throws(KeychainError) -> [ProtectionClass: SymmetricKey] {
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for protectionClass in keybag.wrappedClassKeys.keys {
            guard
                let key = keybag.unwrap(
                    protectionClass, with: keybag.deviceWrappingKey(deviceKey, for: protectionClass))
            else {
                throw KeychainError(.errSecDecode, "the keybag does not open with this device secret")
            }
            keys[protectionClass] = key
        }
        return keys
    }

    /// Checks a passcode under the attempt rules and returns the class keys it opens. Must run
    /// under the enclave lock.
    ///
    /// - Throws: `errSecAuthFailed` for a wrong passcode; `errSecInteractionNotAllowed` during a
    ///   delay; `errSecDecode` when the attempt counter was altered or removed (it is then taken
    ///   as 9 failures, with the hour's delay starting now).
    func verify(_ passcode: SecretBytes, _ keybag: Keybag) throws(KeychainError) -> [ProtectionClass: SymmetricKey] {
        guard let parameters = keybag.passcode else { throw KeychainError(.errSecParam, "no passcode is set") }
        var (attempts, tampered) = try loadAttempts(keybag)
        let (remaining, restarted) = attempts.remainingDelay(clock: clock)
        if restarted || tampered { try saveAttempts(attempts) }
        if tampered {
            throw KeychainError(
                .errSecDecode,
                "the failed-attempt counter \(files.path(PasscodeAttempts.fileName)) was altered or removed, so it "
                    + "is not believed: it now stands at \(attempts.failed) failed attempts and the next passcode "
                    + "attempt is allowed in \(Int(remaining.rounded(.up))) seconds"
            )
        }
        guard remaining <= 0 else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "passcode entry is disabled for \(Int(remaining.rounded(.up))) more seconds after "
                    + "\(attempts.failed) failed attempts; try again later"
            )
        }
        // Count the attempt on disk before anything else: killing the process during the key
        // derivation or the check still counts it (DESIGN.md, Data protection).
        attempts.failed += 1
        try saveAttempts(attempts)
        let passcodeKey = try parameters.deriveKey(
            passcode: passcode, deviceKey: deviceKey, keychainID: keybag.keychainID)
        let fingerprint = Data(
            HMAC<SHA256>.authenticationCode(for: Data("swift-keychain attempt v1".utf8), using: passcodeKey))
        if fingerprint == attempts.lastFailedFingerprint {
            // The same wrong passcode again: refused, and not counted again (Apple: "consecutive
            // attempts of the same incorrect passcode don't count").
            attempts.failed -= 1
            try saveAttempts(attempts)
            throw KeychainError(
                .errSecAuthFailed, "wrong passcode (the same wrong passcode as last time; not counted again)")
        }

        var keys: [ProtectionClass: SymmetricKey] = [:]
        for protectionClass in keybag.wrappedClassKeys.keys {
            guard
                let key = keybag.unwrap(
                    protectionClass, with: keybag.passcodeWrappingKey(passcodeKey, for: protectionClass))
            else { break }
            keys[protectionClass] = key
        }
        if keys.count == keybag.wrappedClassKeys.count {
            try saveAttempts(PasscodeAttempts())
            recordPasscodeEntry()
            return keys
        }
        attempts.lastFailedFingerprint = fingerprint
        attempts.bootID = clock.bootID
        attempts.delayStart = clock.uptime()
        try saveAttempts(attempts)
        if keybag.eraseAfterFailedAttempts && attempts.failed >= 10 {
            try erase(keybag)
            throw KeychainError(
                .errSecAuthFailed, "wrong passcode; this was the 10th failed attempt and the keychain has been erased")
        }
        let delay = PasscodeDelay.seconds(afterFailures: attempts.failed)
        let wait = delay > 0 ? "; the next attempt is allowed in \(Int(delay)) seconds" : ""
        throw KeychainError(
            .errSecAuthFailed,
            "wrong passcode (\(attempts.failed) failed attempt\(attempts.failed == 1 ? "" : "s"))\(wait)")
    }
}
