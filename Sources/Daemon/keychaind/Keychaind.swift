import ArgumentParser
import CKeychaindStartup
import Enclave
import Foundation
import KeychainDaemon
import KeychainProtocol
import KeychainSupport
import KeychainSync
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// `keychaind`: the keychain daemon. Per-user (the default), clients start it on demand; with
/// `--system` it serves every local user from a system user of its own. systemd can start
/// either on the first connection (`keychaind.socket`).
@main
struct Keychaind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychaind",
        abstract:
            "The keychain daemon: holds the keys, checks the passcode and fingerprints, and serves each app its "
            + "own items.",
        discussion:
            "Listens on $XDG_RUNTIME_DIR/keychain/socket, or /run/keychain/socket with --system (or a socket "
            + "systemd hands over). Stops cleanly on SIGTERM."
    )

    @Option(
        name: .customLong("idle-lock"), help: "Lock the keychain after this many seconds without a request (0: never).")
    var idleLockSeconds: Double = 300

    @Option(
        name: .customLong("sync-interval"),
        help:
            "With sync set up (keychainctl sync): sync every this many seconds (0: only after a write and when asked).")
    var syncIntervalSeconds: Double = 300

    @Flag(
        name: .customLong("system"),
        help: "Serve every local user, each their own keychain, as the keychaind system user (never root).")
    var system = false

    @Option(
        name: .customLong("system-worker"),
        help: ArgumentHelp(
            "Serve this user's connections, which the system daemon's front hands over.", visibility: .private))
    var workerUID: UInt32?

    @Option(
        name: .customLong("memory-limit"),
        help:
            "With --system: the most memory (MiB of data) one user's worker may hold; past it, that worker alone fails."
    )
    var memoryLimitMiB: UInt64 = 1024

    @Option(name: .customLong("state-directory"), help: "With --system: where each user's keychain is kept, in <uid>/.")
    var stateDirectory = KeychainPaths.systemStateDirectory

    @Option(name: .customLong("runtime-directory"), help: "With --system: the socket's directory.")
    var runtimeDirectory = URL(fileURLWithPath: KeychainPaths.systemSocket).deletingLastPathComponent().path

    @Option(name: .customLong("registry"), help: "With --system: the app registry's directory (root's).")
    var registryDirectory = KeychainPaths.systemAppRegistry

    @Option(
        name: .customLong("tpm"),
        help: ArgumentHelp(
            "Seal each keychain's device secret to a TPM 2.0, with a counter against rollback: 'auto' (the "
                + "machine's /dev/tpmrm0 when it has one; the default with --system), 'none' (the default per user), "
                + "or a tpm2-tss TCTI such as device:/dev/tpmrm0.",
            valueName: "auto|none|tcti"))
    var tpm: String?

    func run() async throws {
        guard kc_deny_process_writes() == 0 else {
            throw KeychainError(
                .errSecInternalComponent,
                "keychaind cannot deny itself ptrace, process_vm_writev and pidfd_getfd: "
                    + "\(String(cString: strerror(errno)))"
            )
        }
        ProcessHardening.apply()
        // git, on what a sync remote sent, runs confined to sync's directory (kc_landlock_confine).
        GitTransport.confiningLauncher.withLock {
            $0 = [InstalledFiles.runningProgram, "--confined-exec"]
        }
        // A client that goes away mid-reply is a closed connection, not the daemon's end.
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { DaemonLogHandler(label: $0) }
        var logger = Logger(label: "keychaind")
        if system {
            reportCapabilities(logger)
            try await runFront(logger)
            return
        }
        if let workerUID {
            logger[metadataKey: "uid"] = "\(workerUID)"
            try reportConfinement(of: workerUID, logger)
        } else {
            let landlock = kc_landlock_abi()
            if landlock > 0 {
                logger.info("sync's git runs confined by Landlock (ABI \(landlock)) to sync's directory")
            } else {
                logger.warning("this kernel has no Landlock: sync's git runs unconfined, as keychaind's user")
            }
        }
        let channel = try workerUID.map { _ throws in try startWorker(logger) }
        let module = try trustedPlatformModule(logger)
        let configuration =
            workerUID != nil
            ? KeychainDaemon.Configuration(
                mode: .system, keychainDirectory: URL(fileURLWithPath: stateDirectory),
                runtimeDirectory: URL(fileURLWithPath: runtimeDirectory),
                idleLockSeconds: max(0, idleLockSeconds), listeningDescriptor: nil,
                registryDirectory: URL(fileURLWithPath: registryDirectory), tpm: module,
                syncIntervalSeconds: max(0, syncIntervalSeconds),
                worker: workerUID.flatMap { uid in channel.map { .init(uid: uid, channel: $0) } })
            : KeychainDaemon.Configuration(
                keychainDirectory: KeychainPaths.keychainDirectory(),
                runtimeDirectory: KeychainPaths.runtimeDirectory(),
                idleLockSeconds: max(0, idleLockSeconds), listeningDescriptor: Self.socketFromSystemd(), tpm: module,
                syncIntervalSeconds: max(0, syncIntervalSeconds))
        let daemon: KeychainDaemon
        do {
            daemon = try KeychainDaemon(configuration: configuration, logger: logger)
        } catch let running as KeychainDaemon.AlreadyRunning {
            logger.info("\(running)")
            return
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger))
        try await group.run()
    }

    /// The front of the system daemon (``SystemFront``): it accepts, and hands each user's
    /// connections to a worker of theirs started with this daemon's options.
    private func runFront(_ logger: Logger) async throws {
        var workerArguments = [
            "--idle-lock", String(max(0, idleLockSeconds)), "--sync-interval", String(max(0, syncIntervalSeconds)),
            "--registry", registryDirectory,
        ]
        if let tpm { workerArguments += ["--tpm", tpm] }
        let front: SystemFront
        do {
            front = try SystemFront(
                settings: SystemFront.Settings(
                    stateDirectory: URL(fileURLWithPath: stateDirectory),
                    runtimeDirectory: URL(fileURLWithPath: runtimeDirectory),
                    listeningDescriptor: Self.socketFromSystemd(), workerArguments: workerArguments,
                    memoryLimit: memoryLimitMiB << 20),
                logger: logger)
        } catch let running as KeychainDaemon.AlreadyRunning {
            logger.info("\(running)")
            return
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [front], gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger))
        try await group.run()
    }

    /// A worker's start: it dies with the front and holds at most `--memory-limit`; its channel
    /// from the front is its standard input.
    private func startWorker(_ logger: Logger) throws -> Int32 {
        guard kc_die_with_parent() == 0 else {
            throw KeychainError(.errSecParam, "a worker runs under the system daemon's front, which has ended")
        }
        guard kc_limit_memory(memoryLimitMiB << 20) == 0 else {
            throw KeychainError(.errSecParam, "cannot limit the worker's memory: \(String(cString: strerror(errno)))")
        }
        logger.info("worker of uid \(workerUID ?? 0): its data at most \(memoryLimitMiB) MiB")
        let channel = dup(0)
        _ = fcntl(channel, F_SETFD, FD_CLOEXEC)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        dup2(null, 0)
        close(null)
        return channel
    }

    /// Says how the worker of `uid` confined itself before its first thread
    /// (``kc_worker_startup``), after checking it was to this user's directory.
    private func reportConfinement(of uid: UInt32, _ logger: Logger) throws {
        let directory = URL(fileURLWithPath: stateDirectory).appendingPathComponent(String(uid)).path
        let confined = String(cString: kc_worker_directory())
        guard confined == directory else {
            throw KeychainError(.errSecParam, "the worker confined itself to \(confined), not to \(directory)")
        }
        let abi = kc_worker_confinement()
        if abi > 0 {
            let inspector = kc_worker_inspector_pid()
            logger.info(
                "confined by Landlock (ABI \(abi)) to \(directory); its process inspector (pid \(inspector)) opens its clients' /proc entries"
            )
        } else {
            logger.warning(
                "this kernel has no Landlock: the worker, and sync's git, are not confined to \(directory) (the process boundary still holds)"
            )
        }
    }

    /// The TPM `--tpm` names, and a line saying which protection is in force. `auto` without a
    /// TPM, or with one that cannot be opened, keeps the secrets in files (and says why); a
    /// TPM named explicitly that cannot be opened stops the daemon.
    private func trustedPlatformModule(_ logger: Logger) throws -> TrustedPlatformModule? {
        let choice = tpm ?? (system ? "auto" : "none")
        let module: TrustedPlatformModule?
        switch choice {
        case "none":
            module = nil
        case "auto":
            switch TrustedPlatformModule.onThisMachine() {
            case .success(let opened): module = opened
            case .failure(let error):
                logger.warning("\(error.message); device secrets stay in files")
                module = nil
            case nil: module = nil
            }
        default:
            module = try TrustedPlatformModule(tcti: choice)
        }
        if let module {
            logger.info("device secrets: sealed to the TPM \(module.tcti), with a counter against rollback")
        } else {
            logger.info("device secrets: in files of mode 0600 (no TPM)")
        }
        return module
    }

    /// Says what became of the capabilities: before `main`, `--system` kept `CAP_SYS_PTRACE`
    /// alone (`kc_system_capabilities`), which systemd's `AmbientCapabilities=` or `setpriv
    /// --ambient-caps` gives a process of the keychaind user. It is needed to read
    /// `/proc/PID/exe` of another user's process, and nothing else is; no child (fprintd's
    /// tools) inherits it, and no_new_privs is set. A seccomp filter denies it `ptrace`,
    /// `process_vm_writev` and `pidfd_getfd` (``kc_deny_process_writes``): it reads
    /// processes, and can change none.
    private func reportCapabilities(_ logger: Logger) {
        if kc_system_capabilities() == 1 {
            logger.info("capabilities: CAP_SYS_PTRACE alone, and ptrace, process_vm_writev and pidfd_getfd denied")
        } else {
            logger.warning(
                """
                keychaind --system runs without CAP_SYS_PTRACE, so it cannot see which program another user runs \
                and refuses their connections; give it the capability (AmbientCapabilities=CAP_SYS_PTRACE, or \
                setpriv --inh-caps +sys_ptrace --ambient-caps +sys_ptrace)
                """
            )
        }
    }

    /// The listening socket systemd passed (`LISTEN_PID` is this process and `LISTEN_FDS` ≥ 1:
    /// descriptor 3), checked to be a socket.
    static func socketFromSystemd() -> Int32? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_PID"] == String(getpid()), let count = environment["LISTEN_FDS"].flatMap(Int.init),
            count >= 1
        else { return nil }
        var info = stat()
        guard fstat(3, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        return 3
    }
}
