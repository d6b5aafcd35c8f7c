import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service bridge (`keychain-secret-service`): a program of the user on the
/// user's session bus that serves `org.freedesktop.secrets` and opens, for each D-Bus client, a
/// connection that acts for that client (``KeychainRequest/actForProcess(_:)``).
///
/// keychaind identifies the client itself, from the process the bridge names, by the rules of
/// the socket (``PeerIdentity``, ``AppIdentity``): the bridge says *which* process asks, never
/// *who* it is. What keychaind takes on the bridge's word is only that the process named is the
/// one that sent the D-Bus call, which the bus told the bridge. So only a bridge it trusts may
/// ask:
/// - per-user daemon: the `keychain-secret-service` installed beside this `keychaind` (as a
///   program of the same user can run any app with `LD_PRELOAD`, this mode keeps honest apps
///   apart, not hostile ones: Docs/SecurityModel.md);
/// - system daemon: the program root registered as the Secret Service bridge
///   (`"secret-service-bridge": true`), trusted as any registered app is (installed by root,
///   untraced, its pinned file).
///
/// The process must run as the bridge's user: a bridge acts for its own user's apps alone.
extension KeychainDaemon {
    /// The client that `bridge`'s connection acts for from now on, once `bridge` is shown to be
    /// a trusted bridge and `process` one of its user's processes.
    func acting(for process: ProcessReference, bridge: Client) throws(KeychainError) -> Client {
        guard bridge.bridge == nil else {
            throw KeychainError(
                .errSecParam, "this connection already acts for pid \(bridge.peer.pid): one process per connection")
        }
        guard isTrustedBridge(bridge) else {
            throw KeychainError(
                .errSecMissingEntitlement,
                configuration.mode == .system
                    ? "only the program registered as the Secret Service bridge (\"secret-service-bridge\": true in "
                        + "/etc/keychain/apps.d) may act for its user's D-Bus clients"
                    : "only the keychain-secret-service beside keychaind (\(Self.bridgeExecutable)) may act for D-Bus "
                        + "clients")
        }
        let identity: PeerIdentity
        do throws(PeerIdentity.Refusal) {
            identity = try PeerIdentity.of(process, uid: bridge.peer.uid)
        } catch {
            throw KeychainError(.errSecInteractionNotAllowed, "keychaind cannot identify the D-Bus client: \(error)")
        }
        let app = appIdentity(of: identity)
        auditIfUntrusted(app, identity, as: "untrusted D-Bus client: its own items only")
        var client = Client(
            peer: identity, app: app, keychain: bridge.keychain, connection: bridge.connection, keychainImport: nil)
        client.bridge = bridge.peer
        return client
    }

    /// True when `client` may act for D-Bus clients.
    func isTrustedBridge(_ client: Client) -> Bool {
        if configuration.mode == .system { return client.app.isSecretServiceBridge }
        return client.peer.executable == Self.bridgeExecutable
    }

    /// The per-user daemon's bridge: the `keychain-secret-service` in this daemon's own
    /// directory (still after a package upgrade replaced both files while this daemon runs).
    static let bridgeExecutable = URL(fileURLWithPath: InstalledFiles.runningProgram)
        .deletingLastPathComponent().appendingPathComponent("keychain-secret-service").path
}
