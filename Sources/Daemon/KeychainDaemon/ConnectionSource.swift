import ProcessBoundSockets

/// Where a daemon's connections come from: its listening socket (``ConnectionListener``), or,
/// for a system daemon's worker, the front that accepted them (``HandedConnections``).
protocol ConnectionSource: Sendable {
    /// Takes connections until ``stop()``, handing each to `taken` (which must not wait).
    func takeUntilStopped(_ taken: @escaping @Sendable (Int32) -> Void) async
    /// Ends the taking.
    func stop()
}

extension ConnectionListener: ConnectionSource {
    func takeUntilStopped(_ taken: @escaping @Sendable (Int32) -> Void) async { await acceptUntilStopped(taken) }
}

extension HandedConnections: ConnectionSource {
    func takeUntilStopped(_ taken: @escaping @Sendable (Int32) -> Void) async { await receiveUntilStopped(taken) }
}
