import Foundation
import KeychainProtocol
import KeychainSupport

/// Where `keychain-secret-service install` puts the Secret Service so that it starts on demand:
/// a D-Bus activation file (the session bus starts the bridge at the first call to
/// `org.freedesktop.secrets`) and a systemd user unit (`Type=dbus`), which the activation file
/// names for buses that activate through systemd.
///
/// - For this user: `$XDG_DATA_HOME/dbus-1/services` (`~/.local/share`) and
///   `$XDG_CONFIG_HOME/systemd/user` (`~/.config`), running this program. The session bus looks
///   in the user's data directory before the system's, so this file wins over gnome-keyring's
///   `/usr/share/dbus-1/services/org.freedesktop.secrets.service`.
/// - For every user of the system daemon (`--system`, as root): this program copied to
///   ``systemProgram`` (root's, as the daemon trusts only programs root alone can change) and
///   registered in the app registry as the Secret Service bridge, which the system daemon lets
///   act for D-Bus clients; `/usr/local/share/dbus-1/services` (before `/usr/share` in the
///   standard `XDG_DATA_DIRS`), `/etc/systemd/user`, and the portal file (``portalFile``).
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
            program: InstalledFiles.runningProgram)
    }

    /// Every user's installation, for the system daemon.
    static let system = SecretServiceInstall(
        activationFile: "/usr/local/share/dbus-1/services/\(fileName)", unitFile: "/etc/systemd/user/\(unitName)",
        program: systemProgram)

    /// The system installation's portal file, which routes xdg-desktop-portal's Secret portal
    /// to the keychain's backend (``SecretPortalBackend``) on desktops whose portal set names
    /// none (GNOME's `gnome-keyring.portal` already names `org.freedesktop.secrets`, the
    /// bridge's name). xdg-desktop-portal reads portal files from its system folder alone.
    static let portalFile = "/usr/share/xdg-desktop-portal/portals/keychain.portal"
    static let portal = """
        [portal]
        DBusName=org.freedesktop.secrets
        Interfaces=org.freedesktop.impl.portal.Secret

        """

    /// Where the system installation puts the program, and its registration.
    static let systemProgram = "/usr/local/libexec/keychain-secret-service"
    static let registrationPath = "\(KeychainPaths.systemAppRegistry)/keychain-secret-service.json"

    /// The bridge's registration: its program, its own group, and the right to act for D-Bus
    /// clients.
    static func registration(program: String) -> String {
        """
        {"identifier": "keychain-secret-service", "executable": "\(program)",
         "keychain-access-groups": ["keychain-secret-service"], "secret-service-bridge": true}

        """
    }

    /// The activation file: the bus runs `Exec` itself, or asks systemd for the unit.
    var activation: String {
        """
        [D-BUS Service]
        Name=org.freedesktop.secrets
        Exec=\(program)
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
        ExecStart=\(program)

        """
    }

    /// Writes both files (and, for every user, the program and its registration); what was
    /// done, for the user.
    func install() throws(KeychainError) -> String {
        if program == Self.systemProgram {
            try InstalledFiles.copy(from: InstalledFiles.runningProgram, to: program, mode: 0o755)
            try InstalledFiles.write(Self.registration(program: program), at: Self.registrationPath)
            try InstalledFiles.write(Self.portal, at: Self.portalFile)
        }
        try InstalledFiles.write(activation, at: activationFile)
        try InstalledFiles.write(unit, at: unitFile)
        return "installed the Secret Service: \(activationFile) and \(unitFile); it starts at the first request"
    }

    /// Where a distribution package puts the program: `/usr/bin`, beside keychaind (so that a
    /// per-user keychaind trusts it as its bridge), and registered for the system daemon.
    static let packagedProgram = "/usr/bin/keychain-secret-service"

    /// Writes the files a distribution package ships beneath `root` (Debian's `debian/tmp`), the
    /// same text `install --system` writes, with the package's paths: the activation file in
    /// `/usr/share/dbus-1/services` (where Debian's package diverts gnome-keyring's, whose name
    /// it takes), the user unit in `/usr/lib/systemd/user`, the registration (a configuration
    /// file of the package) and the portal file. The paths written.
    static func writePackageFiles(beneath root: String) throws(KeychainError) -> [String] {
        let packaged = SecretServiceInstall(
            activationFile: "\(root)/usr/share/dbus-1/services/\(fileName)",
            unitFile: "\(root)/usr/lib/systemd/user/\(unitName)", program: packagedProgram)
        let files = [
            (packaged.activationFile, packaged.activation), (packaged.unitFile, packaged.unit),
            ("\(root)\(registrationPath)", registration(program: packagedProgram)), ("\(root)\(portalFile)", portal),
        ]
        for (path, text) in files { try InstalledFiles.write(text, at: path) }
        return files.map(\.0)
    }

    /// Removes both files; what was done.
    func uninstall() -> String {
        let files =
            [activationFile, unitFile]
            + (program == Self.systemProgram ? [Self.registrationPath, Self.portalFile, program] : [])
        let removed = files.filter { (try? FileManager.default.removeItem(atPath: $0)) != nil }
        return removed.isEmpty
            ? "the Secret Service was not installed" : "removed \(removed.joined(separator: " and "))"
    }
}
