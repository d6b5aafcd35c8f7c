import KeychainProtocol
import ProcessBoundSockets

#if canImport(Glibc)
import Glibc
#endif

/// A user's prompt agent on the system daemon (``PromptAgents``, ``KeychainRequest/servePrompts``).
extension KeychainDaemon {
    /// Refuses a client that may not become its user's prompt agent: outside the system daemon,
    /// a program not registered as one, or while another agent of the user runs.
    func checkPromptAgent(_ client: Client) throws(KeychainError) {
        guard configuration.mode == .system else {
            throw KeychainError(.errSecParam, "the per-user keychaind draws its own sheets: it takes no prompt agent")
        }
        guard client.app.isPromptAgent else {
            throw KeychainError(
                .errSecMissingEntitlement,
                "this program is not the prompt agent: root registers it with \"prompt-agent\": true in its file "
                    + "in /etc/keychain/apps.d")
        }
        guard promptAgents.agent(for: client.peer.uid) == nil else {
            throw KeychainError(
                .errSecDuplicateItem, "another prompt agent already draws uid \(client.peer.uid)'s sheets")
        }
    }

    /// Lends the agent's connection to its user's authentications until the agent exits or
    /// fails, or the daemon stops.
    func servePromptAgent(_ socket: ClientSocket, _ client: Client) {
        let uid = client.peer.uid
        let channel = PromptAgentChannel(socket: socket, pid: client.peer.pid, pidfd: client.peer.pidfd)
        guard promptAgents.register(channel, uid: uid) else { return }
        defer {
            promptAgents.remove(channel, uid: uid)
            channel.close()
        }
        audit.notice("prompt agent serving", metadata: ["uid": "\(uid)", "pid": "\(client.peer.pid)"])
        while channel.isAlive && !connections.isStopping { usleep(200_000) }
        audit.notice("prompt agent gone", metadata: ["uid": "\(uid)", "pid": "\(client.peer.pid)"])
    }
}
