/// The sessions one agent connection was bound to with `session-bind@openssh.com`, as OpenSSH's
/// agent keeps them: the hosts the agent was forwarded to, in order (binds marked as
/// forwarding), then the session the last bind names, which a user authentication must be for.
///
/// A connection that ever took a forwarding bind is forwarded for the rest of its life: a later
/// bind, forwarding or not, adds to it and never makes it local. A connection bound to a session
/// (a bind not marked as forwarding) is not bound again, but to that same session.
struct SSHConnectionBinds: Sendable, Equatable {
    /// The most hosts one connection is forwarded through, as OpenSSH's agent allows.
    static let maximumHops = 16

    /// The hosts the agent was forwarded to, nearest first.
    private(set) var forwardedTo: [SSHSessionBinding] = []
    /// The session the last bind names, which is not forwarded further.
    private(set) var session: SSHSessionBinding?

    /// Whether the requests come from a program on another host.
    var isForwarded: Bool { !forwardedTo.isEmpty }

    /// Takes `bind`; false when the connection refuses it: bound already to another session, or
    /// forwarded through too many hosts.
    mutating func take(_ bind: SSHSessionBinding) -> Bool {
        if let session { return session == bind }
        guard bind.isForwarding else {
            session = bind
            return true
        }
        if forwardedTo.last == bind { return true }
        guard forwardedTo.count < Self.maximumHops else { return false }
        forwardedTo.append(bind)
        return true
    }
}
