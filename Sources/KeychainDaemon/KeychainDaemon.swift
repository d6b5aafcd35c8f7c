#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Enclave
import Foundation
import KeychainProtocol
import KeychainServer
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// `keychaind`: the keychain's keys, grants and touches in a process of their own, serving apps
/// over a Unix socket (DESIGN.md, "Components and trust boundaries").
///
/// Each connection's caller comes from the kernel (``PeerIdentity``): its uid chooses the keychain
/// (per-user mode serves the daemon's own uid alone; system mode serves every local user, each
/// their own keychain, ``UserKeychain``), and its executable decides the app it is
/// (``AppIdentity``: the path in per-user mode; in system mode the registered app, the path, or
/// an untrusted identity). Requests are
/// parsed in one place (``RequestParser``); a malformed, oversized or truncated message gets
/// `errSecDecode` and a closed connection while every other connection goes on. A request that
/// can wait runs on a pool of threads, so one client's passcode check or wait for a touch does
/// not stall another; a lookup of one item or two is answered on the event loop
/// (``RequestHandler``).
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

    /// A connection as accepted.
    private enum Connection: Sendable {
        /// Its app known and its requests answered from the start: a per-user daemon's app is
        /// its path, decided on the event loop as the connection is accepted.
        case answering(any Channel)
        /// Its caller known, its app still to be decided (system mode: checks that read the
        /// process's files and may hash its executable, too long for the event loop). Requests
        /// that come meanwhile wait in the ``RequestHandler``.
        case identified(any Channel, PeerIdentity)
        case refused(any Channel, String)
    }

    /// Another daemon serves the runtime directory (or, in system mode, the state directory).
    public struct AlreadyRunning: Error, CustomStringConvertible {
        public var description: String { "keychaind is already running here" }
    }

    private let configuration: Configuration
    /// The locks held for life: on the runtime directory where this daemon binds the socket or
    /// serves its own user, and on the state directory in system mode (one daemon per store).
    private let locks: [DaemonLock]
    /// The keychains served, by uid: the daemon's own in per-user mode; in system mode each
    /// user's, opened at their first connection.
    private let keychains: Mutex<[uid_t: UserKeychain]>
    private let logger: Logger
    /// Failed passcodes, owner actions and which app read which item: never a secret.
    private let audit: Logger
    private let started = ContinuousClock.now
    private let connectionNumbers = Atomic<UInt64>(1)
    private let connected = Atomic<Int>(0)
    /// A flood of bad messages is logged once a second, with how many went unlogged.
    private let malformedLog = LogRateLimit()

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
    }

    /// The keychain of `uid`: in system mode opened at its first request, in `<uid>/`.
    private func keychain(of uid: uid_t) -> UserKeychain {
        keychains.withLock { keychains in
            if let keychain = keychains[uid] { return keychain }
            let keychain = UserKeychain(uid: uid, directory: configuration.keychainDirectory.appendingPathComponent(String(uid)))
            keychains[uid] = keychain
            return keychain
        }
    }

    /// Serves until graceful shutdown (SIGTERM): the requests under way finish and are answered,
    /// then the connections close.
    ///
    public func run() async throws {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        if configuration.mode == .system {
            // Read again at each connection; what does not register is said here, once.
            for problem in AppRegistry(directory: configuration.registryDirectory).problems {
                logger.warning("app registry: \(problem)")
            }
            KeychainImport.removeLeftovers(in: configuration.keychainDirectory)
        }
        let server = try await bind(configuration.runtimeDirectory, pool)
        logger.info("keychaind listening", metadata: ["mode": "\(configuration.mode)", "socket": "\(configuration.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path)", "pid": "\(getpid())"])
        let sessionLocks = SessionLockWatcher(logger: logger) { [self] session, user in
            guard let keychain = keychains.withLock({ $0[user] }) else { return }
            lock(keychain, because: "logind reports the login session \(session) locked")
        }
        sessionLocks.start()
        defer { sessionLocks.stop() }
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.lockWhenIdle() }
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
                // The listener closed (graceful shutdown): requests under way are answered on
                // the threads they run on; then every connection and the idle timer end.
                group.cancelAll()
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        try await pool.shutdownGracefully()
        logger.info("keychaind stopped")
    }

    private func bind(_ runtime: URL, _ pool: NIOThreadPool) async throws -> NIOAsyncChannel<Connection, Never> {
        // A client that ends its stream inside a message is still told why (remote half-closure).
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let servesEveryUser = configuration.mode == .system
        let admit: @Sendable (any Channel) -> EventLoopFuture<Connection> = { [self] channel in
            PeerIdentity.of(channel).flatMapThrowing { [self] identity -> Connection in
                // Per-user: the same user only; another uid never reaches the keychain (DESIGN.md).
                guard servesEveryUser || identity.uid == getuid() else {
                    identity.close()
                    return .refused(channel, "a process of uid \(identity.uid)")
                }
                do {
                    try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(FrameDecoder()), RequestHandler(pool: pool))
                } catch {
                    identity.close()
                    throw error
                }
                if servesEveryUser { return .identified(channel, identity) }
                // Answered from here, on the event loop: the first request does not wait for a
                // task to be scheduled (about a tenth of a first request's time).
                guard let client = client(identity, .perUser(identity), on: channel) else {
                    identity.close()
                    return .refused(channel, Self.exitedWhileIdentified(identity))
                }
                try startAnswering(client, on: channel)
                return .answering(channel)
            }.flatMapErrorThrowing { error in
                .refused(channel, "\(error)")
            }
        }
        if let descriptor = configuration.listeningDescriptor {
            return try await bootstrap.bind(descriptor, childChannelInitializer: admit)
        }
        // We hold the daemon lock, so a socket file here is one a dead daemon left.
        let path = runtime.appendingPathComponent(KeychainPaths.socketName).path
        let server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: admit)
        // Every local user may connect to the system daemon; the kernel tells it who they are.
        chmod(path, configuration.mode == .system ? 0o666 : 0o600)
        return server
    }

    private func serve(_ connection: Connection) async {
        switch connection {
        case .refused(let channel, let reason):
            audit.warning("connection refused", metadata: ["peer": "\(reason)"])
            try? await channel.close()
        case .identified(let channel, let identity):
            let app = AppIdentity.system(identity, registry: AppRegistry(directory: configuration.registryDirectory))
            guard let client = client(identity, app, on: channel) else {
                identity.close()
                audit.warning("connection refused", metadata: ["peer": "\(Self.exitedWhileIdentified(identity))"])
                try? await channel.close()
                return
            }
            do {
                try await channel.eventLoop.submit { try self.startAnswering(client, on: channel) }.get()
            } catch {
                try? await channel.close()
            }
            await answerUntilClosed(channel)
        case .answering(let channel):
            await answerUntilClosed(channel)
        }
    }

    private static func exitedWhileIdentified(_ identity: PeerIdentity) -> String {
        "pid \(identity.pid), which exited while it was identified"
    }

    /// The client `identity` is as `app`, counted among the connected until `channel` closes,
    /// and its pidfd closed then; nil when its process has ended (the checks read /proc/PID:
    /// had the process ended meanwhile, its pid could be another's), the pidfd left open.
    private func client(_ identity: PeerIdentity, _ app: AppIdentity, on channel: any Channel) -> Client? {
        guard kc_pidfd_is_alive(identity.pidfd) == 1 else { return nil }
        let number = connectionNumbers.add(1, ordering: .relaxed).oldValue
        connected.add(1, ordering: .relaxed)
        let client = Client(
            peer: identity, app: app, keychain: keychain(of: identity.uid), connection: number,
            keychainImport: configuration.mode == .system ? KeychainImport(state: configuration.keychainDirectory, uid: identity.uid, connection: number) : nil)
        channel.closeFuture.whenComplete { [self] _ in
            client.keychainImport?.abandon()
            connected.subtract(1, ordering: .relaxed)
            client.keychain.keychain.openedServer?.endConnection(number)
            identity.close()
        }
        if let reason = app.untrustedBecause {
            audit.warning("untrusted app: its own items only", metadata: ["uid": "\(identity.uid)", "app": "\(identity.executable)", "pid": "\(identity.pid)", "because": "\(reason)"])
        }
        audit.debug("connection", metadata: ["uid": "\(identity.uid)", "app": "\(app.identifier)", "pid": "\(identity.pid)", "connection": "\(number)"])
        return client
    }

    /// Has `channel`'s ``RequestHandler`` answer with `client`'s identity; on the event loop.
    private func startAnswering(_ client: Client, on channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.handler(type: RequestHandler.self).start({ [self] frame in route(frame, client) }, context: pipeline.context(handlerType: RequestHandler.self))
    }

    /// Waits until `channel` closes. Stopping (graceful shutdown cancels this task): the request
    /// under way is answered, then the connection closes.
    private func answerUntilClosed(_ channel: any Channel) async {
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.pipeline.fireUserInboundEventTriggered(RequestHandler.Stop())
        }
    }

    /// One connection's client: the process, the app it is, and its user's keychain.
    private struct Client: Sendable {
        let peer: PeerIdentity
        let app: AppIdentity
        let keychain: UserKeychain
        let connection: UInt64
        /// The move of the user's per-user keychain under way on this connection (system mode).
        let keychainImport: KeychainImport?

        var ownerSession: OwnerSessions.Key { OwnerSessions.Key(executable: app.identifier, session: peer.session) }
    }

    /// Who is calling, for one request: the app's groups (in per-user mode its own and the
    /// shared ones the owner granted it; in system mode those registered for it), and whether
    /// its owner session is open. Recomputed for every request, so a grant, a revocation or a
    /// session's end takes effect at once. An untrusted app is never the owner.
    private func caller(_ client: Client) -> CallerIdentity {
        let groups = client.app.registeredGroups ?? client.keychain.keychain.openedServer?.accessGroups(forApp: client.app.identifier) ?? [client.app.identifier]
        let owner = client.app.untrustedBecause == nil && client.keychain.owners.isOpen(client.ownerSession)
        return CallerIdentity(accessGroups: groups, isOwnerTool: owner, connection: client.connection)
    }

    /// Reads one frame, on the event loop: the work that answers it, and whether that work runs
    /// there too. Only a lookup of one item or two in a keychain already open does (opening one checks
    /// every row's version, and a search for many items could hold the loop).
    private func route(_ frame: InboundFrame, _ client: Client) -> RequestHandler.Route {
        let request: KeychainRequest
        switch frame {
        case .oversized(let length):
            return .refusal(WireError("a request of \(length) bytes, over the \(WireFrame.maximumRequest)-byte limit").keychainError)
        case .truncated:
            return .refusal(WireError("the connection ended inside a request").keychainError)
        case .body(let body):
            // The handler wipes the frame once routed (a copy wiped here would leave its storage).
            do throws(WireError) {
                request = try RequestParser.parse(body)
            } catch {
                if let suppressed = malformedLog.admit() {
                    audit.warning("malformed request", metadata: ["app": "\(caller(client).defaultAccessGroup)", "reason": "\(error.reason)", "unlogged since the last": "\(suppressed)"])
                }
                return .refusal(error.keychainError)
            }
        }
        let atOnce = request.isSmallLookup && client.keychain.keychain.openedServer != nil
        return RequestHandler.Route(runsAtOnce: atOnce) { [self] in answer(request, client) }
    }

    /// The reply to one request, and whether the connection stays open.
    private func answer(_ request: KeychainRequest, _ client: Client) -> RequestHandler.Reply {
        let caller = caller(client)
        let keychain = client.keychain
        let owners = keychain.owners
        // A trusted app's process must still be untraced and run the same file: a debugger
        // attached after the connection, or another program run in the process, ends it.
        if let file = client.app.executableFile, !ExecutableTrust.stillUntraced(client.peer.pid, executable: file) {
            audit.warning("connection closed: the app is traced or runs another program", metadata: ["app": "\(client.app.identifier)", "pid": "\(client.peer.pid)"])
            return (ReplyParser.encode(.failure(KeychainError(.errSecInteractionNotAllowed, "this process is being traced, or runs another program than when it connected; the daemon no longer trusts it"))), false)
        }
        let mark = owners.mark
        keychain.beginRequest()
        var result = Result { () throws(KeychainError) in try reply(to: request, caller, client) }
        // Idle time counts from the end of the last request: a long passcode check is not idleness.
        keychain.endRequest()
        defer { record(request, result, caller, client.peer.uid) }
        if case .success = result {
            let session = client.ownerSession
            let lockedMeanwhile = KeychainError(.errSecInteractionNotAllowed, "the keychain locked while the owner session was opening: log in again")
            switch request {
            case .openOwnerSession:
                if !owners.open(session, unlessAllEndedSince: mark) { result = .failure(lockedMeanwhile) }
            case .openOwnerSessionByBiometry:
                if case .success(.match(.matched)) = result, !owners.open(session, unlessAllEndedSince: mark) { result = .failure(lockedMeanwhile) }
            case .closeOwnerSession: owners.close(session)
            // Lock and a new passcode end every owner session, as they forget every grant.
            case .lock, .setPasscode, .removePasscode: owners.closeAll()
            default: break
            }
        }
        return (ReplyParser.encode(result), true)
    }

    private func reply(to request: KeychainRequest, _ caller: CallerIdentity, _ client: Client) throws(KeychainError) -> KeychainReply {
        let keychain = client.keychain.keychain
        let untrusted = client.app.untrustedBecause != nil
        let system = configuration.mode == .system
        switch request {
        case .daemonStatus:
            return .daemon(try status(of: keychain))
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
    private func status(of keychain: OnDemandKeychain) throws(KeychainError) -> DaemonStatus {
        guard case .status(let device) = try keychain.perform(.deviceStatus, caller: CallerIdentity(accessGroups: ["keychaind"])) else {
            throw KeychainError.errSecInternalComponent
        }
        let uptime = started.duration(to: .now)
        return DaemonStatus(
            mode: configuration.mode == .system ? "system" : "per-user", pid: getpid(), uptime: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            connectedClients: connected.load(ordering: .relaxed), idleLockSeconds: configuration.idleLockSeconds, device: device)
    }

    /// The audit trail: passcode failures, failed integrity checks (a replayed row, an altered or
    /// rolled-back database), and which app read or changed which item (class and service, never
    /// a secret or another attribute's value).
    private func record(_ request: KeychainRequest, _ result: Result<KeychainReply, KeychainError>, _ caller: CallerIdentity, _ uid: uid_t) {
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

    /// The most items a search answered on the event loop may ask for: two tell one match from
    /// several (`keychainctl find-generic-password` asks so before it reads the first).
    fileprivate static let itemsLookedUpAtOnce = 2

    /// The client's identification, or a search for one item or two: never a wait, never many
    /// rows.
    fileprivate var isSmallLookup: Bool {
        switch self {
        case .identify: true
        case .copyMatching(let query): query.limit.maximum.map { $0 <= Self.itemsLookedUpAtOnce } ?? false
        default: false
        }
    }
}
