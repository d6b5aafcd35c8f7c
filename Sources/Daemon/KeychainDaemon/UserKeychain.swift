import Biometrics
import Enclave
import Foundation
import KeychainProtocol
import KeychainServer
import Synchronization

/// One user's keychain as the daemon serves it: its files, its unlocked class keys, its owner
/// sessions and how long it has been idle. The per-user daemon has one, for its own user; the
/// system daemon one per user who connects, each in `/var/lib/keychain/<uid>/`, as each iPhone
/// has its own Enclave: nothing of one user's keychain (keys, grants, counters, owner sessions,
/// lock state) is shared with another's.
final class UserKeychain: Sendable {
    /// The user it belongs to.
    let uid: uid_t
    /// The keychain's server, opened at its first request.
    let onDemand: OnDemandKeychain
    let owners = OwnerSessions()
    /// Moves at every change a search could see (``ChangeNumber``); nil when the kernel gives
    /// no sealed memory.
    let changes = ChangeNumber()
    /// The user's logins the PAM module reported: the keychain locks when the last ends.
    let logins = ReportedLogins()
    /// Requests of this user carried out at once: four (a fifth waits on its own connection's
    /// thread), so that one user's passcode checks, each an scrypt run with its memory, cannot
    /// take every processor and the memory from another's.
    let requestSlots = DispatchSemaphore(value: 4)
    private let activity = Mutex(Activity())
    /// True while a sync after a write is due: writes meanwhile join it.
    let syncScheduled = Mutex(false)

    private struct Activity {
        var last = ContinuousClock.now
        var lockedForIdleness = false
        /// Requests being served: the keychain is not idle while one runs (a passcode check, a
        /// wait for a touch).
        var inFlight = 0
    }

    /// The keychain of `uid` in `directory`, unopened and locked (its class keys are kept in
    /// this process's memory alone); fprintd verifies the fingers of `uid`'s account; `tpm`,
    /// when given, seals its device secret; `localSyncRemotes` false (the system daemon) refuses
    /// a sync remote that is a path of this machine.
    init(uid: uid_t, directory: URL, tpm: TrustedPlatformModule?, localSyncRemotes: Bool) {
        self.uid = uid
        onDemand = OnDemandKeychain(
            directory: directory, cache: ProcessClassKeyCache(), fingerprintUser: FprintdSensor.userName(of: uid),
            tpm: tpm, localSyncRemotes: localSyncRemotes)
    }

    /// A request for this keychain started.
    func beginRequest() {
        activity.withLock { $0 = Activity(inFlight: $0.inFlight + 1) }
    }

    /// A request for this keychain ended: idle time counts from now.
    func endRequest() {
        activity.withLock { $0 = Activity(inFlight: $0.inFlight - 1) }
    }

    /// True once, when no request has been served for `seconds` and none is under way.
    func becameIdle(after seconds: Double) -> Bool {
        activity.withLock { activity in
            guard !activity.lockedForIdleness, activity.inFlight == 0,
                activity.last.duration(to: .now) >= .seconds(seconds)
            else { return false }
            activity.lockedForIdleness = true
            return true
        }
    }

    /// When the keychain becomes idle for `seconds`: the end of its last request plus `seconds`.
    /// Nil while a request is under way (its end starts a full idle time) and once the keychain
    /// was locked for idleness (until a request comes).
    func idleLockDue(after seconds: Double) -> ContinuousClock.Instant? {
        activity.withLock { activity in
            activity.lockedForIdleness || activity.inFlight > 0 ? nil : activity.last + .seconds(seconds)
        }
    }

    /// Locks the keychain as `keychainctl lock` does: the unlocked class keys are dropped, every
    /// grant is forgotten and every owner session ends. False when it was never opened (so
    /// nothing was unlocked).
    func lock() -> Bool {
        owners.closeAll()
        guard let server = onDemand.openedServer else { return false }
        _ = try? server.handle(.lock, caller: CallerIdentity(accessGroups: ["keychaind"]))
        changes?.advance()
        return true
    }
}
