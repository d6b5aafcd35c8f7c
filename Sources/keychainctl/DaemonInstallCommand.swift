import ArgumentParser
import Foundation
import Keychain

/// `keychainctl daemon install --user`: systemd user units that start keychaind on the first
/// connection to its socket (socket activation), as gpg-agent's units do.
struct DaemonInstall: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install", abstract: "Install systemd user units for keychaind (keychaind.socket, keychaind.service).")

    @Flag(name: .customLong("user"), help: "Install for this user (~/.config/systemd/user); the only kind there is.")
    var user = false

    func run() throws {
        try Session.run {
            guard user else { throw KeychainError(.errSecParam, "say --user: the units are per-user (system mode comes later)") }
            let daemon = try DaemonLocation.keychaind()
            let environment = ProcessInfo.processInfo.environment
            let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
                ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
            let directory = config.appendingPathComponent("systemd/user")
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Self.socketUnit.write(to: directory.appendingPathComponent("keychaind.socket"), atomically: true, encoding: .utf8)
                try Self.serviceUnit(daemon).write(to: directory.appendingPathComponent("keychaind.service"), atomically: true, encoding: .utf8)
            } catch {
                throw KeychainError(.errSecIO, "cannot write the units in \(directory.path): \(error.localizedDescription)")
            }
            print("""
                installed \(directory.path)/keychaind.socket and keychaind.service (ExecStart=\(daemon))
                enable them: systemctl --user daemon-reload && systemctl --user enable --now keychaind.socket
                """)
        }
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
