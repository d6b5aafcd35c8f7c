import ArgumentParser
import Foundation
import Keychain

struct Daemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start, stop or look at keychaind, the keychain daemon.",
        subcommands: [
            DaemonStart.self, DaemonStop.self, DaemonStatusCommand.self, DaemonInstall.self, DaemonMigrateToSystem.self,
        ])
}

struct DaemonStart: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "start", abstract: "Start keychaind unless it runs.")

    @Option(
        name: .customLong("idle-lock"),
        help: ArgumentHelp(
            "Lock after this many seconds without a request, 0 never (when it starts one; default 300).",
            valueName: "seconds"))
    var idleLockSeconds: Double?

    @Option(
        name: .customLong("tpm"),
        help: ArgumentHelp(
            "Seal the device secret to a TPM 2.0 you can open, with a counter against rollback: 'auto' "
                + "(/dev/tpmrm0) or a tpm2-tss TCTI (Docs/TPM.md; when it starts one).",
            valueName: "auto|tcti"))
    var tpm: String?

    @Option(
        name: .customLong("sync-interval"),
        help: ArgumentHelp(
            "With sync set up, sync every this many seconds, 0 only after a write and when asked (when it starts "
                + "one; default 300).",
            valueName: "seconds"))
    var syncIntervalSeconds: Double?

    func run() throws {
        try KeychainCommand.run(handlesSecrets: false) {
            try refuseForSystemDaemon("start")
            let arguments =
                (idleLockSeconds.map { ["--idle-lock", String($0)] } ?? []) + (tpm.map { ["--tpm", $0] } ?? [])
                + (syncIntervalSeconds.map { ["--sync-interval", String($0)] } ?? [])
            guard let status = try DaemonControl.status(starting: true, daemonArguments: arguments) else { return }
            print("keychaind is running (pid \(status.pid))")
        }
    }
}

struct DaemonStop: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop keychaind after its requests.")

    func run() throws {
        try KeychainCommand.run(handlesSecrets: false) {
            try refuseForSystemDaemon("stop")
            if let pid = try DaemonControl.stop() {
                print("keychaind (pid \(pid)) stopped")
            } else {
                print("keychaind is not running")
            }
        }
    }
}

struct DaemonStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show keychaind's pid, uptime, mode, clients and lock state.")

    func run() throws {
        try KeychainCommand.run(handlesSecrets: false) {
            let found = try KeychainCommand.systemDaemonSocket.map { socket throws(KeychainError) in
                try DaemonControl.systemStatus(socket: socket)
            }
            guard let status = try found ?? DaemonControl.status(starting: false) else {
                print("keychaind is not running (it starts on the first request of a program that uses it)")
                return
            }
            let lock =
                !status.device.passcodeSet
                ? "unlocked (no passcode is set)" : status.device.isUnlocked ? "unlocked" : "locked"
            let idleLock =
                status.idleLockSeconds > 0
                ? "\(Int(status.idleLockSeconds)) s without a request" : "never (idle lock off)"
            print(
                """
                keychaind: running
                pid: \(status.pid)
                uptime: \(Int(status.uptime)) s
                mode: \(status.mode)
                connected clients: \(status.connectedClients)
                keychain: \(lock)
                locks after: \(idleLock)
                sheets: \(status.sheets)
                """)
        }
    }
}

/// The system daemon belongs to systemd (or whoever started it as its user): this user's
/// `keychainctl` neither starts nor stops it.
private func refuseForSystemDaemon(_ action: String) throws(KeychainError) {
    guard KeychainCommand.systemDaemonSocket != nil else { return }
    throw KeychainError(
        .errSecParam,
        "the system keychain daemon serves this machine; \(action) it as root with systemd: systemctl \(action) "
            + "keychaind.socket keychaind.service"
    )
}
