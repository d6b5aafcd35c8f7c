import Synchronization

/// Owner sessions: after the passcode, one app in one login session sees every access group
/// for a while, as `sudo` remembers a terminal. Nothing in a request claims ownership; the
/// daemon looks its records up by the caller's executable and login session, both from the
/// kernel. The login session is its id with its leader's start time (``LoginSession``), so a
/// later session that gets the same id after the leader exits inherits nothing.
///
/// A session ends after ``lifetime``, on `owner logout`, when its login session's leader
/// exits, and for everyone on lock and passcode change. What it does not stop: another program in
/// the same login session that runs the same
/// executable (`keychainctl`) within the lifetime, as with sudo's tickets.
final class OwnerSessions: Sendable {
    struct Key: Hashable {
        var executable: String
        var session: LoginSession
    }

    /// How long a session lasts after the passcode: 5 minutes, sudo's default.
    static let lifetime: Duration = .seconds(300)

    private struct Sessions {
        var opened: [Key: ContinuousClock.Instant] = [:]
        /// How many times every session was ended (lock, passcode change).
        var endings: UInt64 = 0
    }

    private let sessions = Mutex(Sessions())

    /// A mark to give ``open(_:unlessAllEndedSince:)``: taken before the passcode or the touch
    /// is checked.
    var mark: UInt64 { sessions.withLock { $0.endings } }

    /// Opens `key`'s session, unless every session was ended since `mark` (a lock that came
    /// while the passcode or the touch was being checked wins); false then.
    func open(_ key: Key, unlessAllEndedSince mark: UInt64) -> Bool {
        sessions.withLock { sessions in
            guard sessions.endings == mark else { return false }
            sessions.opened[key] = .now
            return true
        }
    }

    func close(_ key: Key) {
        sessions.withLock { $0.opened[key] = nil }
    }

    func closeAll() {
        sessions.withLock { sessions in
            sessions.opened.removeAll()
            sessions.endings += 1
        }
    }

    /// True while `key`'s session is younger than ``lifetime`` and its login session's leader
    /// is alive.
    func isOpen(_ key: Key) -> Bool {
        sessions.withLock { sessions in
            guard let start = sessions.opened[key] else { return false }
            guard start.duration(to: .now) < Self.lifetime, key.session.isAlive else {
                sessions.opened[key] = nil
                return false
            }
            return true
        }
    }
}
