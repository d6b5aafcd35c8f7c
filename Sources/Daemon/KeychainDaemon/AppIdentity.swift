import Foundation
import KeychainSupport

/// Who an app is, as the daemon decides it once per connection: its identifier (the key of its
/// owner sessions and of the audit log) and its access groups, the default first.
///
/// - Per-user mode: the executable's path, with the shared groups the owner granted it
///   (`keychainctl apps grant`).
/// - System mode, in this order: an app its Flatpak or Snap sandbox names, once the daemon has
///   confirmed the claim (``SandboxedApp``), is the app the registry names for its Flatpak id or
///   snap name, or else `flatpak:ID` / `snap:NAME`, alone; a native executable the daemon can
///   trust (``ExecutableTrust``) is the app the registry names for its path (``AppRegistry``:
///   its identifier and `keychain-access-groups`), or else its path, alone. One that fails a
///   check is *untrusted*: its identity is `untrusted:` and its path, it sees its own items
///   only, never a shared group, and the audit log says why.
struct AppIdentity: Sendable {
    /// The app's identifier.
    let identifier: String
    /// The groups registered for it in system mode; nil where the per-user entitlements apply.
    let registeredGroups: [String]?
    /// Why the app is not trusted, when it is not.
    let untrustedBecause: String?
    /// The file a trusted native app runs: a request from a process that no longer runs it, or
    /// that is being traced, is refused.
    let executableFile: ExecutableTrust.FileIdentity?
    /// A trusted native program root registered as the prompt agent (``PromptAgents``).
    var isPromptAgent = false
    /// A trusted native program root registered as the Secret Service bridge.
    var isSecretServiceBridge = false

    /// The per-user daemon's view: the executable is the app.
    static func perUser(_ peer: PeerIdentity) -> AppIdentity {
        AppIdentity(identifier: peer.executable, registeredGroups: nil, untrustedBecause: nil, executableFile: nil)
    }

    /// The system daemon's view of `peer`, given the registry.
    static func system(_ peer: PeerIdentity, registry: AppRegistry) -> AppIdentity {
        switch SandboxedApp.claim(pid: peer.pid, securityLabel: peer.securityLabel) {
        case .refused(let reason): return untrusted(peer, reason)
        case .app(let app): return sandboxed(peer, app, registry: registry)
        case .none: break
        }
        let file: ExecutableTrust.FileIdentity
        switch ExecutableTrust.verdict(pid: peer.pid, executable: peer.executable) {
        case .untrusted(let reason): return untrusted(peer, reason)
        case .trusted(let running): file = running
        }
        var app = trusted(peer, key: peer.executable, file: file, registry: registry)
        app.isPromptAgent = app.untrustedBecause == nil && registry.apps[peer.executable]?.promptAgent == true
        app.isSecretServiceBridge =
            app.untrustedBecause == nil && registry.apps[peer.executable]?.secretServiceBridge == true
        return app
    }

    /// A sandboxed app's identity, once its process is shown to run the file installed for it.
    private static func sandboxed(_ peer: PeerIdentity, _ app: SandboxedApp, registry: AppRegistry) -> AppIdentity {
        guard peer.executable.hasPrefix(app.sandboxPrefix), !peer.executable.split(separator: "/").contains("..") else {
            return untrusted(
                peer, "\(app.registryKey) runs \(peer.executable), which is not its own program in \(app.sandboxPrefix)"
            )
        }
        guard let root = ProcessFiles.open(peer.pid, .root) else {
            return untrusted(peer, "\(app.registryKey): its root cannot be inspected")
        }
        defer { close(root) }
        let file: ExecutableTrust.FileIdentity
        switch ExecutableTrust.verdict(pid: peer.pid, executable: peer.executable, root: "/proc/self/fd/\(root)") {
        case .untrusted(let reason): return untrusted(peer, "\(app.registryKey): \(reason)")
        case .trusted(let running): file = running
        }
        let installed = app.hostDirectory + peer.executable.dropFirst(app.sandboxPrefix.count)
        if let reason = ExecutableTrust.reasonNotInstalled(installed, is: file) {
            return untrusted(peer, "it claims to be \(app.registryKey), but \(reason)")
        }
        return trusted(peer, key: app.registryKey, file: file, registry: registry)
    }

    /// A trusted app running `file`: the app the registry names under `key`, or else `key` alone
    /// (its identifier and only group); untrusted when the running file is not a pinned build.
    private static func trusted(
        _ peer: PeerIdentity, key: String, file: ExecutableTrust.FileIdentity, registry: AppRegistry
    ) -> AppIdentity {
        let (registered, mismatch) = registry.app(for: key) { AppRegistry.sha256(ofRunningFile: peer.pid) }
        if let mismatch { return untrusted(peer, mismatch) }
        guard let registered else {
            return AppIdentity(identifier: key, registeredGroups: [key], untrustedBecause: nil, executableFile: file)
        }
        return AppIdentity(
            identifier: registered.identifier, registeredGroups: registered.accessGroups, untrustedBecause: nil,
            executableFile: file)
    }

    private static func untrusted(_ peer: PeerIdentity, _ reason: String) -> AppIdentity {
        let identifier = "untrusted:" + peer.executable
        return AppIdentity(
            identifier: identifier, registeredGroups: [identifier], untrustedBecause: reason, executableFile: nil)
    }
}
