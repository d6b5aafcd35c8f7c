#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Enclave
import Foundation
import KeychainProtocol
import KeychainServer
import Logging
import ServiceLifecycle
import ProcessBoundSockets
import Synchronization
import KeychainSupport

/// `keychaind`: the keychain's keys, grants and touches in a process of their own, serving apps
/// over a Unix socket (DESIGN.md, "Components and trust boundaries").
///
/// Each connection's caller comes from the kernel (``PeerIdentity``): its uid chooses the keychain
/// (per-user mode serves the daemon's own uid alone; system mode serves every local user, each
/// their own keychain, ``UserKeychain``), and its executable decides the app it is
/// (``AppIdentity``: the path in per-user mode; in system mode the registered app, the path, or
/// an untrusted identity). Every request must come from the process identified, not merely
/// on its connection (``KeychainDaemon/admit(_:)`` and the extension that serves connections).
/// Requests are parsed in one place (``RequestParser``); a malformed, oversized or truncated
/// message gets `errSecDecode` and a closed connection while every other connection goes on.
/// Each connection is served on a thread of its own, so one client's passcode check or wait
/// for a touch does not stall another.
/// Unlocked class keys live only in this process's memory (locked, excluded from dumps).
public final class KeychainDaemon: Service {
    /// How a daemon runs.
    public struct Configuration: Sendable {
        /// Whom a daemon serves.
        public enum Mode: Sendable, Equatable {
            /// Its own user, whose files it keeps in the user's home (`$XDG_DATA_HOME/keychain`).
            case perUser
            /// Every local user, each with a keychain of their own in `<uid>/` under
            /// ``Configuration/keychainDirectory``, run as a system user that owns those files.
            case system
        }

        /// Whom the daemon serves.
        public var mode: Mode
        /// The keychain's files (`$XDG_DATA_HOME/keychain`); in system mode the directory that
        /// holds every user's (`/var/lib/keychain`).
        public var keychainDirectory: URL
        /// The socket's directory (`$XDG_RUNTIME_DIR/keychain`; in system mode `/run/keychain`).
        public var runtimeDirectory: URL
        /// Seconds without a request after which the keychain locks; 0 never.
        public var idleLockSeconds: Double
        /// A listening socket handed over by systemd (`LISTEN_FDS`); nil binds the socket.
        public var listeningDescriptor: Int32?
        /// System mode: the app registry (`/etc/keychain/apps.d`), read at each connection.
        public var registryDirectory: URL

        /// A configuration.
        public init(
            mode: Mode = .perUser, keychainDirectory: URL, runtimeDirectory: URL, idleLockSeconds: Double = 300, listeningDescriptor: Int32? = nil,
            registryDirectory: URL = URL(fileURLWithPath: KeychainPaths.systemAppRegistry)
        ) {
            self.mode = mode
            self.registryDirectory = registryDirectory
            self.keychainDirectory = keychainDirectory
            self.runtimeDirectory = runtimeDirectory
            self.idleLockSeconds = idleLockSeconds
            self.listeningDescriptor = listeningDescriptor
        }
    }

    /// Another daemon serves the runtime directory (or, in system mode, the state directory).
    public struct AlreadyRunning: Error, CustomStringConvertible {
        public var description: String { "keychaind is already running here" }
    }

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
    private let started = ContinuousClock.now
    /// The connections open, capped per user.
    let connections: ConnectionTable
    /// A flood of bad messages is logged once a second, with how many went unlogged.
    let malformedLog = LogRateLimit()

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
                throw KeychainError(.errSecParam, "keychaind --system runs as its own user (\(KeychainPaths.systemUserName)), never as root: start it with systemd (keychainctl daemon install --system) or setpriv")
            }
        }
        var locks: [DaemonLock] = []
        if system {
            let state = try KeychainDirectory(configuration.keychainDirectory, creating: true)
            locks.append(try DaemonLock(in: state.url))
        }
        if !system || configuration.listeningDescriptor == nil {
            let runtime = try KeychainDirectory(configuration.runtimeDirectory, creating: true, permissions: system ? 0o755 : 0o700)
            locks.append(try DaemonLock(in: runtime.url))
        }
        self.locks = locks
        self.configuration = configuration
        self.logger = logger
        var audit = logger
        audit[metadataKey: "audit"] = "true"
        self.audit = audit
        keychains = Mutex(system ? [:] : [getuid(): UserKeychain(uid: getuid(), directory: configuration.keychainDirectory)])
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
            let keychain = UserKeychain(uid: uid, directory: configuration.keychainDirectory.appendingPathComponent(String(uid)))
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
            KeychainImport.removeLeftovers(in: configuration.keychainDirectory)
        }
        let listener = try listen()
        logger.info("keychaind listening", metadata: ["mode": "\(configuration.mode)", "socket": "\(configuration.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path)", "pid": "\(getpid())"])
        let sessionLocks = SessionLockWatcher(logger: logger) { [self] session, user in
            guard let keychain = keychains.withLock({ $0[user] }) else { return }
            lock(keychain, because: "logind reports the login session \(session) locked")
        }
        sessionLocks.start()
        defer { sessionLocks.stop() }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.lockWhenIdle() }
                await listener.acceptUntilStopped { [self] descriptor in admit(descriptor) }
                // Stopping: requests under way are answered on their connections' threads; then
                // every connection and the idle timer end.
                connections.stop()
                await connections.drained()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            listener.stop()
        }
        logger.info("keychaind stopped")
    }

    /// The listening socket: systemd's, or one bound in the runtime directory.
    private func listen() throws(KeychainError) -> ConnectionListener {
        do throws(ConnectionListener.Failure) {
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

    /// One connection's client: the process, the app it is, and its user's keychain.
    struct Client: Sendable {
        let peer: PeerIdentity
        let app: AppIdentity
        let keychain: UserKeychain
        let connection: UInt64
        /// The move of the user's per-user keychain under way on this connection (system mode).
        let keychainImport: KeychainImport?

        /// Its owner session's key; nil when its login session has no leader.
        var ownerSession: OwnerSessions.Key? { peer.session.map { OwnerSessions.Key(executable: app.identifier, session: $0) } }
    }

    /// Who is calling, for one request: the app's groups (in per-user mode its own and the
    /// shared ones the owner granted it; in system mode those registered for it), and whether
    /// its owner session is open. Recomputed for every request, so a grant, a revocation or a
    /// session's end takes effect at once. An untrusted app is never the owner.
    func caller(_ client: Client) -> CallerIdentity {
        let groups = client.app.registeredGroups ?? client.keychain.keychain.openedServer?.accessGroups(forApp: client.app.identifier) ?? [client.app.identifier]
        let owner = client.app.untrustedBecause == nil && (client.ownerSession.map(client.keychain.owners.isOpen) ?? false)
        return CallerIdentity(accessGroups: groups, isOwnerTool: owner, connection: client.connection)
    }

    func reply(to request: KeychainRequest, _ caller: CallerIdentity, _ client: Client) throws(KeychainError) -> KeychainReply {
        let keychain = client.keychain.keychain
        let untrusted = client.app.untrustedBecause != nil
        let system = configuration.mode == .system
        switch request {
        case .daemonStatus:
            return .daemon(try status(of: keychain, for: client.peer.uid))
        case .identify:
            return .done
        case .beginImport, .importChunk, .finishImport:
            // The per-user daemon has none: its keychain answers that only the system daemon imports.
            guard let keychainImport = client.keychainImport else { return try keychain.perform(request, caller: caller) }
            return try Self.perform(request, keychainImport)
        case .openOwnerSession where untrusted, .openOwnerSessionByBiometry where untrusted:
            throw KeychainError(.errSecMissingEntitlement, "this program is not trusted by the system keychain daemon (its log says why), so it cannot act for the owner")
        case .setEntitlement where system, .listEntitlements where system, .declareApp where system, .listDeclaredApps where system:
            throw KeychainError(.errSecParam, "the system keychain daemon takes apps' identifiers and groups from its app registry (/etc/keychain/apps.d), which root edits")
        case .simulateTouch where !caller.isOwnerTool:
            // The simulated sensor is the owner's finger: only the owner's channel touches it.
            throw KeychainError(.errSecMissingEntitlement, "touches of the simulated sensor are taken only in an owner session (`keychainctl owner login`)")
        default:
            return try keychain.perform(request, caller: caller)
        }
    }

    /// One step of moving a per-user keychain in (``KeychainImport``).
    private static func perform(_ request: KeychainRequest, _ keychainImport: KeychainImport) throws(KeychainError) -> KeychainReply {
        switch request {
        case .beginImport: try keychainImport.begin()
        case .importChunk(let file, let offset, let bytes): try keychainImport.append(file: file, offset: offset, bytes: bytes)
        case .finishImport(let passcode): return .count(try keychainImport.finish(passcode: passcode))
        default: throw KeychainError.errSecInternalComponent
        }
        return .done
    }

    /// The daemon's state, and the lock state of the caller's keychain.
    /// In system mode the clients counted are the caller's own: how many other users have is
    /// not theirs to know.
    private func status(of keychain: OnDemandKeychain, for uid: uid_t) throws(KeychainError) -> DaemonStatus {
        guard case .status(let device) = try keychain.perform(.deviceStatus, caller: CallerIdentity(accessGroups: ["keychaind"])) else {
            throw KeychainError.errSecInternalComponent
        }
        let uptime = started.duration(to: .now)
        return DaemonStatus(
            mode: configuration.mode == .system ? "system" : "per-user", pid: getpid(), uptime: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            connectedClients: connections.count(of: configuration.mode == .system ? uid : nil), idleLockSeconds: configuration.idleLockSeconds, device: device)
    }

    /// The audit trail: passcode failures, failed integrity checks (a replayed row, an altered or
    /// rolled-back database), and which app read or changed which item (class and service, never
    /// a secret or another attribute's value).
    func record(_ request: KeychainRequest, _ result: Result<KeychainReply, KeychainError>, _ caller: CallerIdentity, _ uid: uid_t) {
        let outcome: String = switch result {
        case .success: "ok"
        case .failure(let error): "\(error.status)"
        }
        var metadata: Logger.Metadata = ["uid": "\(uid)", "app": "\(caller.defaultAccessGroup)", "connection": "\(caller.connection)", "result": "\(outcome)"]
        if case .failure(let error) = result, error.status == KeychainError.errSecDecode.status {
            // A replayed or altered row, a rolled-back database: the owner must hear of it.
            var details = metadata
            details["because"] = "\(error.message)"
            audit.critical("integrity check failed: nothing was returned", metadata: details)
        }
        switch request {
        case .add(let item):
            metadata["class"] = "\(item.itemClass.rawValue)"
            if case .string(let service)? = item.attributes["svce"] { metadata["service"] = "\(service)" }
            audit.info("add", metadata: metadata)
        case .copyMatching(let query), .update(let query, _), .delete(let query):
            metadata["class"] = "\(query.itemClass.rawValue)"
            if case .string(let service)? = query.attributes["svce"] { metadata["service"] = "\(service)" }
            audit.info(query.returns.contains(.data) ? "read" : "search", metadata: metadata)
        case .createEnclaveKey:
            audit.info("enclave key made", metadata: metadata)
        case .useEnclaveKey(let use):
            if case .sign = use.operation { audit.info("enclave key signed", metadata: metadata) } else { audit.info("enclave key agreed a secret", metadata: metadata) }
        case .unlock, .verifyPasscode, .setPasscode, .removePasscode, .erase, .setEraseAfterFailedAttempts, .enrollFinger, .removeFinger, .setSimulatedSensor:
            audit.notice("passcode check", metadata: metadata)
        case .openOwnerSessionByBiometry:
            // Polled every tenth of a second while the user is asked to touch: only touches are
            // worth a line.
            guard case .success(.match(let match)) = result, match != .noTouch else { break }
            metadata["match"] = "\(match)"
            audit.notice("opening an owner session with a fingerprint", metadata: metadata)
        case .finishImport:
            audit.notice("moving a per-user keychain in", metadata: metadata)
        case .openOwnerSession, .closeOwnerSession:
            audit.notice(request.isOpeningOwnerSession ? "opening an owner session" : "closing an owner session", metadata: metadata)
        case .setEntitlement(let app, let group, let granted):
            metadata["target"] = "\(app)"
            metadata["group"] = "\(group)"
            audit.notice(granted ? "entitlement granted" : "entitlement revoked", metadata: metadata)
        case .declareApp(let app, let declaration):
            metadata["target"] = "\(app)"
            if let declaration {
                metadata["identifier"] = "\(declaration.applicationIdentifier)"
                metadata["groups"] = "\(declaration.keychainAccessGroups.joined(separator: ","))"
            }
            audit.notice(declaration == nil ? "app declaration removed" : "app declared", metadata: metadata)
        default:
            break
        }
    }

    /// Locks each keychain once no request came for it for ``Configuration/idleLockSeconds``.
    ///
    /// It sleeps until the first idle time runs out, not on a fixed tick: an idle daemon does
    /// not wake up (a laptop's battery), and a lock is not late by a tick. A request can only
    /// move a keychain's idle time later, and a keychain opened meanwhile runs out after this
    /// wake-up, so none is missed.
    private func lockWhenIdle() async {
        let idle = configuration.idleLockSeconds
        guard idle > 0 else { return }
        while !Task.isCancelled {
            var wake = ContinuousClock.now + .seconds(idle)
            for keychain in keychains.withLock({ Array($0.values) }) {
                if keychain.becameIdle(after: idle) {
                    lock(keychain, because: "\(idle) s without a request")
                } else if let due = keychain.idleLockDue(after: idle) {
                    wake = min(wake, due)
                }
            }
            try? await Task.sleep(until: wake, clock: .continuous)
        }
    }

    /// Locks `keychain` as `keychainctl lock` does (``UserKeychain/lock()``).
    private func lock(_ keychain: UserKeychain, because reason: String) {
        guard keychain.lock() else { return }
        logger.info("locked", metadata: ["uid": "\(keychain.uid)", "because": "\(reason)"])
    }
}

extension KeychainRequest {
    fileprivate var isOpeningOwnerSession: Bool {
        if case .openOwnerSession = self { true } else { false }
    }
}
