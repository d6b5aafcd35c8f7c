import ArgumentParser
import Foundation
import Keychain

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl daemon install --user`: systemd user units that start keychaind on the first
/// connection to its socket (socket activation), as gpg-agent's units do. `--system` (as root):
/// the keychaind system user, keychaind copied where only root can change it, and system units
/// with systemd's hardening (``SystemUnits``).
struct DaemonInstall: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract:
            "Install systemd units for keychaind (keychaind.socket, keychaind.service): --user for this user, "
            + "--system (as root) for every user of the machine."
    )

    @Flag(name: .customLong("user"), help: "Install for this user (~/.config/systemd/user).")
    var user = false

    @Flag(
        name: .customLong("system"),
        help: ArgumentHelp(
            "Install the system daemon (as root): the keychaind user, /usr/local/libexec/keychaind and units in "
                + "/etc/systemd/system.")
    )
    var system = false

    @Flag(
        name: .customLong("tpm"),
        help: "With --user: seal the device secret to this machine's TPM (/dev/tpmrm0), which you must be able to open."
    )
    var tpm = false

    @Option(
        name: .customLong("package-root"),
        help: ArgumentHelp(
            "Write the files a distribution package ships beneath this directory, and nothing else.",
            visibility: .private))
    var packageRoot: String?

    func run() throws {
        try KeychainCommand.run(handlesSecrets: false) {
            if let packageRoot {
                for path in try PackageFiles.write(beneath: packageRoot) { print(path) }
                return
            }
            switch (user, system) {
            case (true, false): try installForUser()
            case (false, true) where !tpm: try SystemUnits.install()
            case (false, true):
                throw KeychainError(
                    .errSecParam, "the system daemon uses the machine's TPM whenever it has one: --tpm is for --user")
            default:
                throw KeychainError(
                    .errSecParam, "say --user (this user's daemon) or --system (the machine's, as root)")
            }
        }
    }

    /// Where systemd looks for this user's units: `$XDG_CONFIG_HOME/systemd/user`, or
    /// `~/.config/systemd/user`.
    static func userUnitDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        return config.appendingPathComponent("systemd/user")
    }

    private func installForUser() throws {
        let daemon = try DaemonLocation.keychaind()
        let directory = Self.userUnitDirectory()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Self.socketUnit.write(
                to: directory.appendingPathComponent("keychaind.socket"), atomically: true, encoding: .utf8)
            try Self.serviceUnit(daemon + (tpm ? " --tpm auto" : "")).write(
                to: directory.appendingPathComponent("keychaind.service"), atomically: true, encoding: .utf8)
        } catch {
            throw KeychainError(.errSecIO, "cannot write the units in \(directory.path): \(error.localizedDescription)")
        }
        print(
            """
            installed \(directory.path)/keychaind.socket and keychaind.service (ExecStart=\(daemon))
            enable them: systemctl --user daemon-reload && systemctl --user enable --now keychaind.socket
            """)
    }

    /// The socket systemd listens on for keychaind: where clients look for it.
    static let socketUnit = """
        [Unit]
        Description=swift-keychain daemon socket

        [Socket]
        ListenStream=%t/keychain/socket
        SocketMode=0600
        DirectoryMode=0700

        [Install]
        WantedBy=sockets.target

        """

    /// The daemon, started by the socket's first connection; SIGTERM stops it cleanly.
    static func serviceUnit(_ daemon: String) -> String {
        """
        [Unit]
        Description=swift-keychain daemon (keychaind)
        Requires=keychaind.socket

        [Service]
        ExecStart=\(daemon)
        KillSignal=SIGTERM

        [Install]
        Also=keychaind.socket

        """
    }
}
