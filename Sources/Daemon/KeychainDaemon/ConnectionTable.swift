import ProcessBoundSockets
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The connections open, capped per user and in all, so that one user holding connections
/// cannot take the daemon's descriptors (or threads: each connection has one) from another.
/// Stopping ends every connection's reading; the daemon then waits for the table to empty.
final class ConnectionTable: Sendable {
    /// How many connections a daemon keeps open.
    struct Limits: Sendable {
        /// Per user.
        var perUser: Int
        /// In all.
        var total: Int

        /// The limits for a daemon of `mode` whose process may open `descriptors` files: a
        /// system daemon allows each user 64 connections (an app holds one, a command one for
        /// its life). Each connection holds two descriptors (its socket and its client's
        /// pidfd), and 64 are kept for the daemon's own files.
        static func forDaemon(system: Bool, descriptors: Int) -> Limits {
            let total = max(16, (descriptors - 64) / 2)
            return Limits(perUser: system ? min(64, total) : total, total: total)
        }
    }

    /// Why a connection was not admitted.
    enum Refusal: Error {
        case userAtLimit(Int)
        case daemonAtLimit(Int)
        case stopping
    }

    private struct State {
        var sockets: [UInt64: ClientSocket] = [:]
        var perUser: [uid_t: Int] = [:]
        var stopping = false
    }

    let limits: Limits
    private let state = Mutex(State())
    private let numbers = Atomic<UInt64>(1)

    init(limits: Limits) {
        self.limits = limits
    }

    /// Admits `socket`, of `uid`: its connection number.
    func admit(_ socket: ClientSocket, uid: uid_t) throws(Refusal) -> UInt64 {
        let number = numbers.add(1, ordering: .relaxed).oldValue
        try state.withLock { (state: inout State) throws(Refusal) in
            guard !state.stopping else { throw .stopping }
            guard state.sockets.count < limits.total else { throw .daemonAtLimit(limits.total) }
            guard state.perUser[uid, default: 0] < limits.perUser else { throw .userAtLimit(limits.perUser) }
            state.sockets[number] = socket
            state.perUser[uid, default: 0] += 1
        }
        return number
    }

    /// Forgets connection `number` of `uid` (its socket is closed by its thread).
    func remove(_ number: UInt64, uid: uid_t) {
        state.withLock { state in
            guard state.sockets.removeValue(forKey: number) != nil else { return }
            state.perUser[uid, default: 1] -= 1
            if state.perUser[uid] == 0 { state.perUser[uid] = nil }
        }
    }

    /// The connections open: `uid`'s, or every user's for nil.
    func count(of uid: uid_t?) -> Int {
        state.withLock { state in uid.map { state.perUser[$0, default: 0] } ?? state.sockets.count }
    }

    /// True once stopping began: a connection ends after the request it is answering.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Admits no more, and ends every connection's reading (a request under way is answered).
    func stop() {
        state.withLock { state in
            state.stopping = true
            for socket in state.sockets.values { socket.stopReading() }
        }
    }

    /// Returns once every connection has ended.
    func drained() async {
        while count(of: nil) > 0, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
