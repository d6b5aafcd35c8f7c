import Synchronization

/// Owner sessions: after the passcode, one app in one login session sees every access group
/// for a while, as `sudo` remembers a terminal. Nothing in a request claims ownership; the
/// daemon looks its records up by the caller's executable and session id, both from the kernel.
///
/// A session ends after ``lifetime``, on `owner logout`, and for everyone on lock and passcode
/// change. What it does not stop: another program in the same login session that runs the same
/// executable (`keychainctl`) within the lifetime, as with sudo's tickets.
final class OwnerSessions: Sendable {
    struct Key: Hashable {
        var executable: String
        var session: Int32
    }

    /// How long a session lasts after the passcode: 5 minutes, sudo's default.
    static let lifetime: Duration = .seconds(300)

    private let opened = Mutex<[Key: ContinuousClock.Instant]>([:])

    func open(_ key: Key) {
        opened.withLock { $0[key] = .now }
    }

    func close(_ key: Key) {
        opened.withLock { $0[key] = nil }
    }

    func closeAll() {
        opened.withLock { $0.removeAll() }
    }

    /// True while `key`'s session is younger than ``lifetime``.
    func isOpen(_ key: Key) -> Bool {
        opened.withLock { opened in
            guard let start = opened[key] else { return false }
            guard start.duration(to: .now) < Self.lifetime else {
                opened[key] = nil
                return false
            }
            return true
        }
    }
}
