import CKeychainSupport
import Enclave
import Foundation
import KeychainProtocol
import KeychainServer
import KeychainSupport
import Logging
import ProcessBoundSockets
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `keychaind`: the keychain's keys, grants and touches in a process of their own, serving apps
/// over a Unix socket (DESIGN.md, "Components and trust boundaries").
///
/// Each connection's caller comes from the kernel (``PeerIdentity``): its uid chooses the keychain
/// (per-user mode serves the daemon's own uid alone; system mode serves every local user, each
/// their own keychain, ``UserKeychain``), and its executable decides the app it is
/// (``AppIdentity``: the path in per-user mode; in system mode the registered app, the path, or
/// an untrusted identity). Every request must come from the process identified, not merely
/// on its connection (``KeychainDaemon/admit(_:)`` and the extension that serves connections).
/// Requests are parsed in one place (``RequestCoder``); a malformed, oversized or truncated
/// message gets `errSecDecode` and a closed connection while every other connection goes on.
/// Each connection is served on a thread of its own, so one client's passcode check or wait
/// for a touch does not stall another.
/// Unlocked class keys live only in this process's memory (locked, excluded from dumps).
public final class KeychainDaemon: Service {
    let configuration: Configuration
    /// The locks held for life: on the runtime directory where this daemon binds the socket or
    /// serves its own user, and on the state directory in system mode (one daemon per store).
    private let locks: [DaemonLock]
    /// The keychains served, by uid: the daemon's own in per-user mode; in system mode each
    /// user's, opened at their first connection.
    let keychains: Mutex<[uid_t: UserKeychain]>
    let logger: Logger
    /// Failed passcodes, owner actions and which app read which item: never a secret.
    let audit: Logger
    let started = ContinuousClock.now
    /// The connections open, capped per user.
    let connections: ConnectionTable
    /// The threads that serve them, one each.
    let connectionThreads = ConnectionThreads()
    /// A flood of bad messages is logged once a second, with how many went unlogged.
    let malformedLog = LogRateLimit()
    /// The users' prompt agents (system mode).
    let promptAgents = PromptAgents()

    /// A daemon that will serve `configuration`: its runtime directory checked (and made 0700;
    /// 0755 in system mode, so that every user reaches the socket) and its lock taken, so that
    /// exactly one daemon serves it. In system mode the state directory is checked too (ours,
    /// 0700) and locked, and the runtime directory is left alone when systemd made it and
    /// passed the socket; the daemon refuses to run as root.
    ///
    /// - Throws: ``AlreadyRunning`` when another daemon holds the lock; `errSecInvalidKeychain`
    ///   when the runtime directory or a parent could be changed by another user; `errSecParam`
    ///   for a system daemon run as root.
    public init(configuration: Configuration, logger: Logger) throws {
        let system = configuration.mode == .system
        if system {
            guard getuid() != 0, geteuid() != 0 else {
                throw KeychainError(
                    .errSecParam,
                    "keychaind --system runs as its own user (\(KeychainPaths.systemUserName)), never as root: "
                        + "start it with systemd (keychainctl daemon install --system) or setpriv"
                )
            }
        }
        var locks: [DaemonLock] = []
        // A worker's front holds the state's and the socket's locks for it.
        let worker = configuration.worker != nil
        if system && !worker {
            let state = try KeychainDirectory(configuration.keychainDirectory, creating: true)
            locks.append(try DaemonLock(in: state.url))
        }
        if !system || (configuration.listeningDescriptor == nil && !worker) {
            let runtime = try KeychainDirectory(
                configuration.runtimeDirectory, creating: true, permissions: system ? 0o755 : 0o700)
            locks.append(try DaemonLock(in: runtime.url))
        }
        self.locks = locks
        self.configuration = configuration
        self.logger = logger
        var audit = logger
        audit[metadataKey: "audit"] = "true"
        self.audit = audit
        keychains = Mutex(
            system
                ? [:]
                : [
                    getuid(): UserKeychain(
                        uid: getuid(), directory: configuration.keychainDirectory, tpm: configuration.tpm,
                        localSyncRemotes: true)
                ])
        connections = ConnectionTable(limits: .forDaemon(system: system, descriptors: Self.raiseDescriptorLimit()))
    }

    /// Raises the soft limit on open files to the hard one (systemd's `LimitNOFILE=`; 1,024
    /// soft is the usual default) and returns it: each connection holds a socket and a pidfd.
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The keychain of `uid`: in system mode opened at its first request, in `<uid>/`.
    func keychain(of uid: uid_t) -> UserKeychain {
        keychains.withLock { keychains in
            if let keychain = keychains[uid] { return keychain }
            let keychain = UserKeychain(
                uid: uid, directory: configuration.keychainDirectory.appendingPathComponent(String(uid)),
                tpm: configuration.tpm, localSyncRemotes: configuration.mode != .system)
            keychains[uid] = keychain
            return keychain
        }
    }

    /// Serves until graceful shutdown (SIGTERM): the requests under way finish and are answered,
    /// then the connections close.
    public func run() async throws {
        if configuration.mode == .system {
            // Read again at each connection; what does not register is said here, once.
            for problem in AppRegistry(directory: configuration.registryDirectory).problems {
                logger.warning("app registry: \(problem)")
            }
            KeychainImport.removeLeftovers(in: configuration.keychainDirectory, uid: configuration.worker?.uid)
        }
        let source = try listen()
        if let worker = configuration.worker {
            logger.info(
                "keychaind serving", metadata: ["mode": "system worker", "uid": "\(worker.uid)", "pid": "\(getpid())"])
        } else {
            logger.info(
                "keychaind listening",
                metadata: [
                    "mode": "\(configuration.mode)",
                    "socket": "\(configuration.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path)",
                    "pid": "\(getpid())",
                ])
        }
        let sessionLocks = SessionLockWatcher(logger: logger) { [self] session, user in
            guard let keychain = keychains.withLock({ $0[user] }) else { return }
            lock(keychain, because: "logind reports the login session \(session) locked")
        }
        sessionLocks.start()
        defer { sessionLocks.stop() }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await self.lockWhenIdle(screenLockFollowed: { sessionLocks.usersWhoseScreenLockIsFollowed() })
                }
                group.addTask { await self.syncPeriodically() }
                await source.acceptUntilStopped { [self] descriptor in admit(descriptor) }
                // Stopping: requests under way are answered on their connections' threads; then
                // every connection and the idle timer end.
                connections.stop()
                await connections.drained()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            source.stop()
        }
        logger.info("keychaind stopped")
    }

    /// Where connections come from: the front (a worker's channel), systemd's listening socket,
    /// or one bound in the runtime directory.
    private func listen() throws(KeychainError) -> ConnectionListener {
        do throws(ConnectionListener.Failure) {
            if let worker = configuration.worker { return try ConnectionListener(handedOverOn: worker.channel) }
            if let descriptor = configuration.listeningDescriptor {
                return try ConnectionListener(descriptor: descriptor)
            }
            // We hold the daemon lock, so a socket file here is one a dead daemon left. Every
            // local user may connect to the system daemon; the kernel tells it who they are.
            let path = configuration.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path
            return try ConnectionListener(path: path, permissions: configuration.mode == .system ? 0o666 : 0o600)
        } catch {
            throw KeychainError(.errSecIO, error.description)
        }
    }
}
