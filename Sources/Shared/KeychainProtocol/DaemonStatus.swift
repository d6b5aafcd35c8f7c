/// What `keychainctl daemon status` shows: the daemon answering this connection.
public struct DaemonStatus: Sendable, Hashable {
    /// How the daemon runs: `per-user` (under the user's own identity).
    public var mode: String
    /// The daemon's process.
    public var pid: Int32
    /// Seconds since it started.
    public var uptime: Double
    /// Connections open now, this one included.
    public var connectedClients: Int
    /// Seconds without a request after which it locks.
    public var idleLockSeconds: Double
    /// The keychain's protection state.
    public var device: DeviceStatus
    /// Who draws the caller's authentication sheets: a pinentry, the keychain's own terminal
    /// sheet, or the user's prompt agent (system mode).
    public var sheets: String

    /// Creates a status.
    public init(
        mode: String, pid: Int32, uptime: Double, connectedClients: Int, idleLockSeconds: Double, device: DeviceStatus,
        sheets: String
    ) {
        self.sheets = sheets
        self.mode = mode
        self.pid = pid
        self.uptime = uptime
        self.connectedClients = connectedClients
        self.idleLockSeconds = idleLockSeconds
        self.device = device
    }
}
