import Foundation
import Keychain
import KeychainSupport

/// The prompt agent, put in place by `keychainctl daemon install --system` so that it starts
/// with each user's session (Docs/SystemMode.md, "Sheets: the prompt agent"):
///
/// - keychainctl copied to ``programPath`` (root's, 0755): the daemon trusts an agent only when
///   root alone can change its file;
/// - its registration in the app registry, `"prompt-agent": true`;
/// - a systemd user unit for every user, in ``unitPath``, which runs it in each user's
///   service manager (one per user, as the daemon takes one agent per user). Enabling it for
///   everyone is left to the administrator (`systemctl --global enable`), as the daemon's own
///   units are.
enum PromptAgentInstall {
    /// Where the agent's program is installed.
    static let programPath = "/usr/local/libexec/keychain-prompt-agent"
    /// Its registration in the app registry.
    static let registrationPath = "\(KeychainPaths.systemAppRegistry)/keychain-prompt-agent.json"
    /// The user unit, for every user.
    static let unitPath = "/etc/systemd/user/keychain-prompt-agent.service"

    /// Installs the agent; what was done, for the administrator.
    static func install() throws -> String {
        try InstalledFiles.copy(from: InstalledFiles.runningProgram, to: programPath, mode: 0o755)
        try InstalledFiles.write(registration(program: programPath), at: registrationPath)
        try InstalledFiles.write(unit(program: programPath), at: unitPath)
        return """
            installed the prompt agent: \(programPath), registered in \(registrationPath); \(unitPath) starts it \
            with each user's session once enabled: systemctl --global enable keychain-prompt-agent.service
            """
    }

    /// The agent's registration: its program, its own group, and the right to draw sheets.
    static func registration(program: String) -> String {
        """
        {"identifier": "keychain-prompt-agent", "executable": "\(program)",
         "keychain-access-groups": ["keychain-prompt-agent"], "prompt-agent": true}

        """
    }

    /// The agent as a service of each user's service manager. It needs nothing of the session's
    /// environment: the daemon tells it each app's terminal or display. Started again when the
    /// daemon restarts and closes its connection.
    static func unit(program: String) -> String {
        """
        [Unit]
        Description=swift-keychain prompt agent: draws the system keychain's sheets for this user

        [Service]
        ExecStart=\(program) prompt-agent
        Restart=always
        RestartSec=2

        [Install]
        WantedBy=default.target

        """
    }
}
