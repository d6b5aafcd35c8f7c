import Synchronization

/// Lets one log line through per interval, counting the ones held back, so that a client
/// flooding the daemon with bad messages cannot flood its log (or its disk) too.
final class LogRateLimit: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var suppressed = 0
    }

    private let interval: Duration
    private let state = Mutex(State())

    init(interval: Duration = .seconds(1)) {
        self.interval = interval
    }

    /// Nil when this line should be dropped; otherwise how many were dropped since the last.
    func admit() -> Int? {
        state.withLock { state in
            let now = ContinuousClock.now
            if let last = state.last, last.duration(to: now) < interval {
                state.suppressed += 1
                return nil
            }
            defer { state = State(last: now, suppressed: 0) }
            return state.suppressed
        }
    }
}
