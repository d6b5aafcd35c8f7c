#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Enclave
import Foundation
import KeychainDaemon
import KeychainProtocol
import Logging
import ServiceLifecycle

/// `keychaind`: the per-user keychain daemon. Clients start it on demand; systemd can start it
/// on the first connection (`keychaind.socket`).
@main
struct Keychaind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychaind",
        abstract: "The keychain daemon: holds the keys, checks the passcode and fingerprints, and serves each app its own items.",
        discussion: "Listens on $XDG_RUNTIME_DIR/keychain/socket (or a socket systemd hands over). Stops cleanly on SIGTERM.")

    @Option(name: .customLong("idle-lock"), help: "Lock the keychain after this many seconds without a request (0: never).")
    var idleLockSeconds: Double = 300

    func run() async throws {
        ProcessHardening.apply()
        // A client that goes away mid-reply is a closed connection, not the daemon's end.
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "keychaind")
        let configuration = KeychainDaemon.Configuration(
            keychainDirectory: KeychainPaths.keychainDirectory(), runtimeDirectory: KeychainPaths.runtimeDirectory(),
            idleLockSeconds: max(0, idleLockSeconds), listeningDescriptor: Self.socketFromSystemd())
        let daemon: KeychainDaemon
        do {
            daemon = try KeychainDaemon(configuration: configuration, logger: logger)
        } catch let running as KeychainDaemon.AlreadyRunning {
            logger.info("\(running)")
            return
        }
        let group = ServiceGroup(configuration: .init(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger))
        try await group.run()
    }

    /// The listening socket systemd passed (`LISTEN_PID` is this process and `LISTEN_FDS` ≥ 1:
    /// descriptor 3), checked to be a socket.
    static func socketFromSystemd() -> Int32? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_PID"] == String(getpid()), let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        var info = stat()
        guard fstat(3, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        return 3
    }
}
