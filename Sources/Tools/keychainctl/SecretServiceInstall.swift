import Foundation
import Keychain
import KeychainSupport

/// Where `keychainctl secret-service install` puts the Secret Service so that it starts on
/// demand: a D-Bus activation file (the session bus starts the bridge at the first call to
/// `org.freedesktop.secrets`) and a systemd user unit (`Type=dbus`), which the activation file
/// names for buses that activate through systemd.
///
/// - For this user: `$XDG_DATA_HOME/dbus-1/services` (`~/.local/share`) and
///   `$XDG_CONFIG_HOME/systemd/user` (`~/.config`), running this keychainctl. The session bus
///   looks in the user's data directory before the system's, so this file wins over
///   gnome-keyring's `/usr/share/dbus-1/services/org.freedesktop.secrets.service`.
/// - For every user of the system daemon (`--system`, as root): `/usr/local/share/dbus-1/services`
///   (before `/usr/share` in the standard `XDG_DATA_DIRS`) and `/etc/systemd/user`, running
///   the prompt agent's program, which the system daemon trusts to act for D-Bus clients.
struct SecretServiceInstall {
    /// The activation file's path, the unit's, and the program they run.
    let activationFile: String
    let unitFile: String
    let program: String

    static let unitName = "keychain-secret-service.service"
    static let fileName = "org.freedesktop.secrets.service"

    /// This user's installation, in the directories of `environment`.
    static func perUser(environment: [String: String] = ProcessInfo.processInfo.environment) -> SecretServiceInstall {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/share"
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.config"
        return SecretServiceInstall(
            activationFile: "\(data)/dbus-1/services/\(fileName)", unitFile: "\(config)/systemd/user/\(unitName)",
            program: KeychainCommand.executablePath)
    }

    /// Every user's installation, for the system daemon.
    static let system = SecretServiceInstall(
        activationFile: "/usr/local/share/dbus-1/services/\(fileName)", unitFile: "/etc/systemd/user/\(unitName)",
        program: PromptAgentInstall.programPath)

    /// The activation file: the bus runs `Exec` itself, or asks systemd for the unit.
    var activation: String {
        """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=\(program) secret-service
        SystemdService=\(Self.unitName)

        """
    }

    /// The unit: started by the bus (`Type=dbus` waits until it owns the name).
    var unit: String {
        """
        [Unit]
        Description=swift-keychain Secret Service (org.freedesktop.secrets on the keychain)

        [Service]
        Type=dbus
        BusName=org.freedesktop.secrets
        ExecStart=\(program) secret-service

        """
    }

    /// Writes both files; what was done, for the user.
    func install() throws -> String {
        try SystemUnits.installText(activation, at: activationFile)
        try SystemUnits.installText(unit, at: unitFile)
        return "installed the Secret Service: \(activationFile) and \(unitFile); it starts at the first request"
    }

    /// Removes both files; what was done.
    func uninstall() -> String {
        let removed = [activationFile, unitFile].filter { (try? FileManager.default.removeItem(atPath: $0)) != nil }
        return removed.isEmpty ? "the Secret Service was not installed" : "removed \(removed.joined(separator: " and "))"
    }
}
