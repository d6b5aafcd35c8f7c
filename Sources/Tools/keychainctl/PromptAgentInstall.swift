import Foundation
import Keychain
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

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
    static var registrationPath: String { "\(KeychainPaths.systemAppRegistry)/keychain-prompt-agent.json" }
    /// The user unit, for every user.
    static let unitPath = "/etc/systemd/user/keychain-prompt-agent.service"

    /// Installs the agent; what was done, for the administrator.
    static func install() throws -> String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        try SystemUnits.installFile(from: executable, to: programPath, mode: 0o755)
        try write(registration, to: registrationPath)
        try write(unit, to: unitPath)
        return """
            installed the prompt agent: \(programPath), registered in \(registrationPath); \(unitPath) starts it \
            with each user's session once enabled: systemctl --global enable keychain-prompt-agent.service
            """
    }

    /// The agent's registration: its program, its own group, and the right to draw sheets.
    static var registration: String {
        """
        {"identifier": "keychain-prompt-agent", "executable": "\(programPath)",
         "keychain-access-groups": ["keychain-prompt-agent"], "prompt-agent": true}

        """
    }

    /// The agent as a service of each user's service manager. It needs nothing of the session's
    /// environment: the daemon tells it each app's terminal or display. Started again when the
    /// daemon restarts and closes its connection.
    static let unit = """
        [Unit]
        Description=swift-keychain prompt agent: draws the system keychain's sheets for this user

        [Service]
        ExecStart=\(programPath) prompt-agent
        Restart=always
        RestartSec=2

        [Install]
        WantedBy=default.target

        """

    /// Writes `text` to `path` (root's, 0644), creating its directory.
    private static func write(_ text: String, to path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw KeychainError(.errSecIO, "cannot write \(path): \(error.localizedDescription)")
        }
        guard chmod(path, 0o644) == 0 else {
            throw KeychainError(.errSecIO, "cannot make \(path) readable: \(String(cString: strerror(errno)))")
        }
    }
}
