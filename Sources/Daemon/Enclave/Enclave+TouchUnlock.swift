import Foundation
import KeychainProtocol

/// Unlocking with a fingerprint, as an iPhone does after its screen locks: Apple's Platform
/// Security guide says that with Touch ID on, the key of the Complete class "is not discarded
/// when the device locks; instead it's wrapped with a key that's given to the Touch ID
/// subsystem", and that the passcode is needed again after a restart, after 48 hours, and after
/// five failed matches.
///
/// Here a lock keeps the WhenUnlocked and WhenPasscodeSet keys, sealed as the unlocked ones are,
/// under entries of their own in the process's cache, and only where that cache is the process's
/// own memory (keychaind's; never the kernel keyring an embedded keychain shares with every
/// process of the user). A matched touch puts them back. They are dropped when the passcode is
/// next required (48 hours after it was last entered, or a restart: the process's memory is
/// gone with it), when biometry locks out, and at every passcode unlock, which caches the keys
/// afresh.
extension Enclave {
    /// Keeps the keys that `lock()` is about to drop, for a touch to unlock with, when biometry
    /// could serve now; otherwise drops any kept before.
    func keepKeysForTouchUnlock(_ keybag: Keybag) {
        guard cache.isPrivateToProcess, let state = try? loadBiometry(), !state.isLockedOut,
            !state.passcodeRequired(clock: clock)
        else {
            dropKeysKeptForTouchUnlock(keybag)
            return
        }
        for protectionClass in Self.classesATouchUnlocks {
            let name = cacheName(protectionClass, keybag)
            if let entry = cache.load(name) { cache.store(Self.keptForTouchName(name), entry) }
        }
    }

    /// Forgets the keys a lock kept for a touch.
    func dropKeysKeptForTouchUnlock(_ keybag: Keybag) {
        for protectionClass in Self.classesATouchUnlocks {
            cache.remove(Self.keptForTouchName(cacheName(protectionClass, keybag)))
        }
    }

    /// True when a matching touch would unlock the keychain now: it is locked with keys kept
    /// for a touch, and biometry is neither locked out nor waiting for the passcode.
    public func canUnlockByTouch() throws(KeychainError) -> Bool {
        let keybag = try keybag()
        guard keybag.passcode != nil, keptKeysExist(keybag), let state = try? loadBiometry() else { return false }
        return !state.isLockedOut && !state.passcodeRequired(clock: clock)
    }

    /// Unlocks the keychain with a touch, which is matched and counted as every touch is
    /// (``evaluate(_:)``): a match puts back the keys the lock kept.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when no keys were kept (the keychain was not
    ///   unlocked with its passcode since keychaind started, or it is an embedded keychain);
    ///   `errSecAuthFailed` when biometry is locked out or the passcode is required (the kept
    ///   keys are dropped then).
    public func unlock(touch: SensorTouch) throws(KeychainError) -> TouchVerdict {
        let keybag = try keybag()
        guard keybag.passcode != nil, keptKeysExist(keybag) else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "a fingerprint can unlock the keychain only after its passcode unlocked it since keychaind started "
                    + "(and within 48 hours): unlock it with the passcode")
        }
        let verdict: TouchVerdict
        do {
            verdict = try evaluate(touch)
        } catch {
            dropKeysKeptForTouchUnlock(keybag)
            throw error
        }
        switch verdict {
        case .matched:
            for protectionClass in Self.classesATouchUnlocks {
                let name = cacheName(protectionClass, keybag)
                if let entry = cache.load(Self.keptForTouchName(name)) { cache.store(name, entry) }
            }
            dropKeysKeptForTouchUnlock(keybag)
        case .notMatched:
            if (try? loadBiometry())?.isLockedOut ?? true { dropKeysKeptForTouchUnlock(keybag) }
        }
        return verdict
    }

    private func keptKeysExist(_ keybag: Keybag) -> Bool {
        cache.load(Self.keptForTouchName(cacheName(.whenUnlocked, keybag))) != nil
    }

    /// The classes a lock drops, and a touch therefore brings back.
    private static let classesATouchUnlocks: [ProtectionClass] = [.whenUnlocked, .whenPasscodeSet]

    /// The cache entry where a lock keeps the key of entry `name`.
    private static func keptForTouchName(_ name: String) -> String { name + ":kept-for-touch" }
}
