#if canImport(Glibc)
import Glibc
#endif
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
/// Each connection's caller comes from the kernel (``PeerIdentity``): its uid must be the
/// daemon's, and its executable is its app identity and default access group. Requests are
/// parsed in one place (``RequestParser``); a malformed, oversized or truncated message gets
/// `errSecDecode` and a closed connection while every other connection goes on. Requests run on
/// a pool of threads, so one client's passcode check or wait for a touch does not stall another.
/// Unlocked class keys live only in this process's memory (locked, excluded from dumps).
public final class KeychainDaemon: Service {
    /// How a daemon runs.
    public struct Configuration: Sendable {
        /// The keychain's files (`$XDG_DATA_HOME/keychain`).
        public var keychainDirectory: URL
        /// The socket's directory (`$XDG_RUNTIME_DIR/keychain`).
        public var runtimeDirectory: URL
        /// Seconds without a request after which the keychain locks; 0 never.
        public var idleLockSeconds: Double
        /// A listening socket handed over by systemd (`LISTEN_FDS`); nil binds the socket.
        public var listeningDescriptor: Int32?

        /// A configuration.
        public init(keychainDirectory: URL, runtimeDirectory: URL, idleLockSeconds: Double = 300, listeningDescriptor: Int32? = nil) {
            self.keychainDirectory = keychainDirectory
            self.runtimeDirectory = runtimeDirectory
            self.idleLockSeconds = idleLockSeconds
            self.listeningDescriptor = listeningDescriptor
        }
    }

    /// A connection as accepted: admitted with its caller's identity, or refused.
    private enum Connection: Sendable {
        case admitted(NIOAsyncChannel<InboundFrame, ByteBuffer>, PeerIdentity)
        case refused(any Channel, String)
    }

    /// Another daemon serves the runtime directory.
    public struct AlreadyRunning: Error, CustomStringConvertible {
        public var description: String { "keychaind is already running for this user" }
    }

    private let configuration: Configuration
    private let runtime: KeychainDirectory
    private let lock: DaemonLock
    private let keychain: OnDemandKeychain
    private let logger: Logger
    /// Failed passcodes, owner actions and which app read which item: never a secret.
    private let audit: Logger
    private let started = ContinuousClock.now
    private let connectionNumbers = Atomic<UInt64>(1)
    private let connected = Atomic<Int>(0)
    private let activity = Mutex(Activity())
    private let owners = OwnerSessions()
    /// A flood of bad messages is logged once a second, with how many went unlogged.
    private let malformedLog = LogRateLimit()

    private struct Activity {
        var last = ContinuousClock.now
        var lockedForIdleness = false
        /// Requests being served: the keychain is not idle while one runs (a passcode check, a
        /// wait for a touch).
        var inFlight = 0
    }

    /// A daemon that will serve `configuration`: its runtime directory checked (and made 0700)
    /// and its lock taken, so that exactly one daemon serves it.
    ///
    /// - Throws: ``AlreadyRunning`` when another daemon holds the lock; `errSecInvalidKeychain`
    ///   when the runtime directory or a parent could be changed by another user.
    public init(configuration: Configuration, logger: Logger) throws {
        runtime = try KeychainDirectory(configuration.runtimeDirectory, creating: true)
        lock = try DaemonLock(in: runtime.url)
        self.configuration = configuration
        self.logger = logger
        var audit = logger
        audit[metadataKey: "audit"] = "true"
        self.audit = audit
        keychain = OnDemandKeychain(directory: configuration.keychainDirectory, cache: ProcessClassKeyCache())
    }

    /// Serves until graceful shutdown (SIGTERM): the requests under way finish and are answered,
    /// then the connections close.
    ///
    public func run() async throws {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        let server = try await bind(runtime.url)
        logger.info("keychaind listening", metadata: ["socket": "\(runtime.url.appendingPathComponent(KeychainPaths.socketName).path)", "pid": "\(getpid())"])
        let sessionLocks = SessionLockWatcher(logger: logger) { [self] session in
            lockKeychain(because: "logind reports the login session \(session) locked")
        }
        sessionLocks.start()
        defer { sessionLocks.stop() }
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.lockWhenIdle() }
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection, pool) }
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

    private func bind(_ runtime: URL) async throws -> NIOAsyncChannel<Connection, Never> {
        // A client that ends its stream inside a message is still told why (remote half-closure).
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let admit: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            PeerIdentity.of(channel).flatMapThrowing { identity -> Connection in
                // Same user only: another uid never reaches the keychain (DESIGN.md).
                guard identity.uid == getuid() else {
                    identity.close()
                    return .refused(channel, "a process of uid \(identity.uid)")
                }
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                return .admitted(try NIOAsyncChannel(wrappingChannelSynchronously: channel), identity)
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
        chmod(path, 0o600)
        return server
    }

    private func serve(_ connection: Connection, _ pool: NIOThreadPool) async {
        switch connection {
        case .refused(let channel, let reason):
            audit.warning("connection refused", metadata: ["peer": "\(reason)"])
            try? await channel.close()
        case .admitted(let channel, let identity):
            let number = connectionNumbers.add(1, ordering: .relaxed).oldValue
            connected.add(1, ordering: .relaxed)
            defer {
                connected.subtract(1, ordering: .relaxed)
                identity.close()
                keychain.openedServer?.endConnection(number)
            }
            audit.debug("connection", metadata: ["app": "\(identity.executable)", "pid": "\(identity.pid)", "connection": "\(number)"])
            try? await channel.executeThenClose { inbound, _ in
                for try await frame in inbound {
                    var (reply, keepOpen) = await answer(frame, identity, number, pool)
                    var buffer = channel.channel.allocator.buffer(capacity: WireFrame.headerSize + reply.count)
                    buffer.writeBytes(WireFrame.header(reply.count))
                    buffer.writeBytes(reply)
                    // A reply may carry a secret. The encoded copy is wiped once it is in the
                    // buffer, and the buffer once the socket has it: the write is awaited until
                    // it completes, when NIO has normally released its reference, so the wipe
                    // reaches the storage (were NIO still holding it, the wipe would touch a
                    // copy and the storage would be freed unwiped).
                    reply.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
                    try await channel.channel.writeAndFlush(buffer)
                    buffer.withUnsafeMutableReadableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
                    guard keepOpen else { return }
                }
            }
        }
    }

    /// Who is calling, for one request: the app's own group and the shared ones the owner
    /// granted it, and whether its owner session is open. Recomputed for every request, so a
    /// grant, a revocation or a session's end takes effect at once.
    private func caller(_ identity: PeerIdentity, _ connection: UInt64) -> CallerIdentity {
        let groups = keychain.openedServer?.accessGroups(forApp: identity.executable) ?? [identity.executable]
        let owner = owners.isOpen(OwnerSessions.Key(executable: identity.executable, session: identity.session))
        return CallerIdentity(accessGroups: groups, isOwnerTool: owner, connection: connection)
    }

    /// The reply to one frame, and whether the connection stays open.
    private func answer(_ frame: InboundFrame, _ identity: PeerIdentity, _ connection: UInt64, _ pool: NIOThreadPool) async -> ([UInt8], Bool) {
        let caller = caller(identity, connection)
        let request: KeychainRequest
        switch frame {
        case .oversized(let length):
            return (ReplyParser.encode(.failure(WireError("a request of \(length) bytes, over the \(WireFrame.maximumRequest)-byte limit").keychainError)), false)
        case .truncated:
            return (ReplyParser.encode(.failure(WireError("the connection ended inside a request").keychainError)), false)
        case .body(var body):
            defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
            do throws(WireError) {
                request = try RequestParser.parse(body)
            } catch {
                if let suppressed = malformedLog.admit() {
                    audit.warning("malformed request", metadata: ["app": "\(caller.defaultAccessGroup)", "reason": "\(error.reason)", "unlogged since the last": "\(suppressed)"])
                }
                return (ReplyParser.encode(.failure(error.keychainError)), false)
            }
        }
        let mark = owners.mark
        beginRequest()
        var result = await perform(request, caller, pool)
        // Idle time counts from the end of the last request: a long passcode check is not idleness.
        endRequest()
        defer { record(request, result, caller) }
        if case .success = result {
            let session = OwnerSessions.Key(executable: identity.executable, session: identity.session)
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

    private func perform(_ request: KeychainRequest, _ caller: CallerIdentity, _ pool: NIOThreadPool) async -> Result<KeychainReply, KeychainError> {
        do {
            return .success(try await pool.runIfActive { [keychain] () throws -> KeychainReply in
                switch request {
                case .daemonStatus:
                    return .daemon(try self.status())
                case .simulateTouch where !caller.isOwnerTool:
                    // The simulated sensor is the owner's finger: only the owner's channel touches it.
                    throw KeychainError(.errSecMissingEntitlement, "touches of the simulated sensor are taken only in an owner session (`keychainctl owner login`)")
                default:
                    return try keychain.perform(request, caller: caller)
                }
            })
        } catch let error as KeychainError {
            return .failure(error)
        } catch {
            return .failure(KeychainError(.errSecInternalComponent, "the daemon is shutting down"))
        }
    }

    private func status() throws(KeychainError) -> DaemonStatus {
        guard case .status(let device) = try keychain.perform(.deviceStatus, caller: CallerIdentity(accessGroups: ["keychaind"])) else {
            throw KeychainError.errSecInternalComponent
        }
        let uptime = started.duration(to: .now)
        return DaemonStatus(
            mode: "per-user", pid: getpid(), uptime: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            connectedClients: connected.load(ordering: .relaxed), idleLockSeconds: configuration.idleLockSeconds, device: device)
    }

    /// The audit trail: passcode failures, and which app read or changed which item (class and
    /// service, never a secret or another attribute's value).
    private func record(_ request: KeychainRequest, _ result: Result<KeychainReply, KeychainError>, _ caller: CallerIdentity) {
        let outcome: String = switch result {
        case .success: "ok"
        case .failure(let error): "\(error.status)"
        }
        var metadata: Logger.Metadata = ["app": "\(caller.defaultAccessGroup)", "connection": "\(caller.connection)", "result": "\(outcome)"]
        switch request {
        case .add(let item):
            metadata["class"] = "\(item.itemClass.rawValue)"
            if case .string(let service)? = item.attributes["svce"] { metadata["service"] = "\(service)" }
            audit.info("add", metadata: metadata)
        case .copyMatching(let query), .update(let query, _), .delete(let query):
            metadata["class"] = "\(query.itemClass.rawValue)"
            if case .string(let service)? = query.attributes["svce"] { metadata["service"] = "\(service)" }
            audit.info(query.returns.contains(.data) ? "read" : "search", metadata: metadata)
        case .unlock, .verifyPasscode, .setPasscode, .removePasscode, .erase, .setEraseAfterFailedAttempts, .enrollFinger, .removeFinger, .setSimulatedSensor:
            audit.notice("passcode check", metadata: metadata)
        case .openOwnerSessionByBiometry:
            // Polled every tenth of a second while the user is asked to touch: only touches are
            // worth a line.
            guard case .success(.match(let match)) = result, match != .noTouch else { break }
            metadata["match"] = "\(match)"
            audit.notice("opening an owner session with a fingerprint", metadata: metadata)
        case .openOwnerSession, .closeOwnerSession:
            audit.notice(request.isOpeningOwnerSession ? "opening an owner session" : "closing an owner session", metadata: metadata)
        case .setEntitlement(let app, let group, let granted):
            metadata["target"] = "\(app)"
            metadata["group"] = "\(group)"
            audit.notice(granted ? "entitlement granted" : "entitlement revoked", metadata: metadata)
        default:
            break
        }
    }

    private func beginRequest() {
        activity.withLock { $0 = Activity(inFlight: $0.inFlight + 1) }
    }

    private func endRequest() {
        activity.withLock { $0 = Activity(inFlight: $0.inFlight - 1) }
    }

    /// Locks the keychain once no request came for ``Configuration/idleLockSeconds``.
    private func lockWhenIdle() async {
        guard configuration.idleLockSeconds > 0 else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let due = activity.withLock { activity in
                guard !activity.lockedForIdleness, activity.inFlight == 0,
                    activity.last.duration(to: .now) >= .seconds(configuration.idleLockSeconds)
                else { return false }
                activity.lockedForIdleness = true
                return true
            }
            if due { lockKeychain(because: "\(configuration.idleLockSeconds) s without a request") }
        }
    }

    /// Locks the keychain as `keychainctl lock` does: the unlocked class keys are dropped, every
    /// grant is forgotten and every owner session ends.
    private func lockKeychain(because reason: String) {
        owners.closeAll()
        guard let server = keychain.openedServer else { return }
        _ = try? server.handle(.lock, caller: CallerIdentity(accessGroups: ["keychaind"]))
        logger.info("locked", metadata: ["because": "\(reason)"])
    }
}

extension KeychainRequest {
    fileprivate var isOpeningOwnerSession: Bool {
        if case .openOwnerSession = self { true } else { false }
    }
}
