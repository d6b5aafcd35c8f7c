import KeychainProtocol
import KeychainSupport
import Synchronization

/// The logins of one user that the PAM module reported (``KeychainRequest/openLoginSession(_:)``),
/// each named by the process that opened it (`login`, `sshd`'s session process, `su`), so that
/// the keychain can lock when the last one ends.
///
/// A login is counted while its process lives: one whose process exited without closing it (a
/// crash, a kill) is forgotten at the next change. A login that never went through the module
/// is not counted. Nothing here is written down: a restarted keychaind counts from none, and is
/// locked anyway.
final class ReportedLogins: Sendable {
    private let processes = Mutex<Set<ProcessReference>>([])

    /// Counts the login `process` opened; the number now counted.
    ///
    /// - Throws: `errSecParam` when `process` is not running (or its pid went to another).
    func open(_ process: ProcessReference) throws(KeychainError) -> Int {
        guard Self.isAlive(process) else {
            throw KeychainError(
                .errSecParam,
                "process \(process.pid), named as the login's, is not running (or started at another time)")
        }
        return processes.withLock { processes in
            processes = processes.filter(Self.isAlive)
            processes.insert(process)
            return processes.count
        }
    }

    /// Forgets the login `process` opened and every login whose process is gone; the number left.
    func close(_ process: ProcessReference) -> Int {
        processes.withLock { processes in
            processes.remove(process)
            processes = processes.filter(Self.isAlive)
            return processes.count
        }
    }

    private static func isAlive(_ process: ProcessReference) -> Bool {
        ProcessFiles.startTime(process.pid) == process.startTime
    }
}
