/// One process of the same machine, named so that its pid cannot stand for another: the pid and
/// the time it started (field 22 of `/proc/PID/stat`, in clock ticks after boot). A pid that
/// went to another process since has another start time.
///
/// A Secret Service bridge names with it the D-Bus client it acts for
/// (``KeychainRequest/actForProcess(_:)``).
public struct ProcessReference: Sendable, Hashable {
    /// The process id, as the bus reported it.
    public var pid: Int32
    /// When it started, in clock ticks after boot.
    public var startTime: UInt64

    /// Names the process `pid` that started at `startTime`.
    public init(pid: Int32, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }
}
