#if canImport(Glibc)
import Glibc
#endif

extension KeychainDaemon {
    /// Locks each keychain once no request came for it for ``Configuration/idleLockSeconds``,
    /// unless its user's screen lock is followed (`screenLockFollowed` names those users, asked
    /// only when a keychain became idle): there the keychain locks with the screen, as an
    /// iPhone's does, not while its owner works at a desktop whose apps ask nothing.
    ///
    /// It sleeps until the first idle time runs out, not on a fixed tick: an idle daemon does
    /// not wake up (a laptop's battery), and a lock is not late by a tick. A request can only
    /// move a keychain's idle time later, and a keychain opened meanwhile runs out after this
    /// wake-up, so none is missed.
    func lockWhenIdle(screenLockFollowed: @Sendable () -> Set<uid_t>) async {
        let idle = configuration.idleLockSeconds
        guard idle > 0 else { return }
        while !Task.isCancelled {
            var wake = ContinuousClock.now + .seconds(idle)
            var followed: Set<uid_t>?
            for keychain in keychains.withLock({ Array($0.values) }) {
                if keychain.becameIdle(after: idle) {
                    let screenLocks = followed ?? screenLockFollowed()
                    followed = screenLocks
                    guard !screenLocks.contains(keychain.uid) else {
                        logger.debug(
                            "not locked for idleness: it locks with the screen", metadata: ["uid": "\(keychain.uid)"])
                        continue
                    }
                    lock(keychain, because: "\(idle) s without a request")
                } else if let due = keychain.idleLockDue(after: idle) {
                    wake = min(wake, due)
                }
            }
            try? await Task.sleep(until: wake, clock: .continuous)
        }
    }

    /// Locks `keychain` as `keychainctl lock` does (``UserKeychain/lock()``).
    func lock(_ keychain: UserKeychain, because reason: String) {
        guard keychain.lock() else { return }
        logger.info("locked", metadata: ["uid": "\(keychain.uid)", "because": "\(reason)"])
    }
}
