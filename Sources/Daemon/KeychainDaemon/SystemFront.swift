import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport
import Logging
import ProcessBoundSockets
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon's front (DESIGN.md, "Blast radius"): it accepts on `/run/keychain/socket`,
/// takes each connection's uid from the kernel (`SO_PEERCRED`), and hands the connection,
/// untouched, to that user's worker (`SCM_RIGHTS`): a `keychaind --system-worker UID` it
/// started, which serves it as keychaind always has (greeting, per-message credentials, pidfd)
/// with that user's keychain alone. The front parses no request and opens no keychain.
///
/// So whatever one user's request or file does to their worker — a trap, runaway memory, a hang,
/// a crash loop — reaches that user's keychain only:
/// - each worker is its own process, limited to `memoryLimit` bytes of data (`RLIMIT_DATA`: an
///   allocation past it fails, and a Swift program traps on that);
/// - each worker is confined by the kernel (Landlock, from before its first thread) to its
///   user's directory, `<state>/<uid>`: it can list the other users' directories and reach
///   nothing in them. On a kernel without Landlock (before 5.13, or with it turned off) the
///   worker runs unconfined and says so in its log; the process boundary still holds;
/// - a worker that ends is started again at its user's next connection, at most once a second
///   while it keeps failing (connections that come sooner wait for it, up to its user's limit
///   of connections).
///
/// The workers die with the front (`PR_SET_PDEATHSIG`), and the front stops them by pid when it
/// stops.
public final class SystemFront: Service {
    /// What the front starts its workers with.
    public struct Settings: Sendable {
        /// Every user's keychain is in `<uid>/` here (`/var/lib/keychain`).
        public var stateDirectory: URL
        /// The socket's directory (`/run/keychain`).
        public var runtimeDirectory: URL
        /// A listening socket handed over by systemd; nil binds the socket.
        public var listeningDescriptor: Int32?
        /// keychaind's options each worker gets (its idle lock, sync interval, TPM, registry).
        public var workerArguments: [String]
        /// The most data one worker may hold, in bytes.
        public var memoryLimit: UInt64

        /// Settings.
        public init(
            stateDirectory: URL, runtimeDirectory: URL, listeningDescriptor: Int32?, workerArguments: [String],
            memoryLimit: UInt64
        ) {
            self.stateDirectory = stateDirectory
            self.runtimeDirectory = runtimeDirectory
            self.listeningDescriptor = listeningDescriptor
            self.workerArguments = workerArguments
            self.memoryLimit = memoryLimit
        }
    }

    /// A worker: its process, the front's end of its channel, and when it started.
    private struct Worker {
        let pid: pid_t
        let channel: Int32
        let started: ContinuousClock.Instant
    }

    /// The workers, the connections waiting for one, and when each user's next may start.
    private struct Table {
        var workers: [uid_t: Worker] = [:]
        var waiting: [uid_t: [Int32]] = [:]
        var nextStart: [uid_t: ContinuousClock.Instant] = [:]
        var stopping = false
    }

    /// The least time between two starts of one user's worker while it keeps ending.
    static let restartInterval = Duration.seconds(1)
    /// The most connections that wait for one user's worker: a user's limit of connections.
    static let maximumWaiting = 64

    private let settings: Settings
    private let logger: Logger
    private let locks: [DaemonLock]
    private let table = Mutex(Table())
    private let executable: String
    /// Users whose worker the launching thread is asked to start, each with where its answer goes.
    private let launches = Mutex<[Launch]>([])
    private let launchRequested = DispatchSemaphore(value: 0)

    /// A front for `settings`: its state and runtime directories checked and locked, so that
    /// exactly one system daemon serves them; it refuses to run as root.
    public init(settings: Settings, logger: Logger) throws {
        guard getuid() != 0, geteuid() != 0 else {
            throw KeychainError(
                .errSecParam,
                "keychaind --system runs as its own user (\(KeychainPaths.systemUserName)), never as root: "
                    + "start it with systemd (keychainctl daemon install --system) or setpriv")
        }
        let state = try KeychainDirectory(settings.stateDirectory, creating: true)
        var locks = [try DaemonLock(in: state.url)]
        if settings.listeningDescriptor == nil {
            let runtime = try KeychainDirectory(settings.runtimeDirectory, creating: true, permissions: 0o755)
            locks.append(try DaemonLock(in: runtime.url))
        }
        self.locks = locks
        self.settings = settings
        self.logger = logger
        // The workers a front starts after a package upgrade replaced its file are the new version's.
        executable = InstalledFiles.runningProgram
    }

    /// Serves until graceful shutdown (SIGTERM), then stops every worker by its pid.
    public func run() async throws {
        let listener: ConnectionListener
        do throws(ConnectionListener.Failure) {
            if let descriptor = settings.listeningDescriptor {
                listener = try ConnectionListener(descriptor: descriptor)
            } else {
                let path = settings.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path
                listener = try ConnectionListener(path: path, permissions: 0o666)
            }
        } catch {
            throw KeychainError(.errSecIO, error.description)
        }
        logger.info(
            "keychaind listening",
            metadata: [
                "mode": "system",
                "socket": "\(settings.runtimeDirectory.appendingPathComponent(KeychainPaths.socketName).path)",
                "pid": "\(getpid())",
            ])
        // Every worker is started from this one thread, which lives as long as the front: a
        // worker dies with the thread that started it (PR_SET_PDEATHSIG follows the parent
        // thread), and a thread of Dispatch's pool may end when idle.
        let launcher = Thread { [self] in launchWorkers() }
        launcher.name = "keychaind launches"
        launcher.start()
        let reaper = Thread { [self] in reapWorkers() }
        reaper.name = "keychaind workers"
        reaper.start()
        await withGracefulShutdownHandler {
            await listener.acceptUntilStopped { [self] descriptor in handOver(descriptor) }
        } onGracefulShutdown: {
            listener.stop()
        }
        stopWorkers()
        logger.info("keychaind stopped")
    }

    // MARK: Connections

    /// Hands `descriptor` to its user's worker, starting one if none runs; closes it when none
    /// can take it.
    private func handOver(_ descriptor: Int32) {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0 else {
            close(descriptor)
            return
        }
        let now = ContinuousClock.now
        let user = uid
        let wait: ContinuousClock.Instant? = table.withLock { table in
            guard table.workers[uid] == nil, let next = table.nextStart[uid], next > now else { return nil }
            var waiting = table.waiting[uid] ?? []
            guard waiting.count < Self.maximumWaiting else { return now }
            if waiting.isEmpty {
                DispatchQueue.global().asyncAfter(deadline: .now() + (next - now).seconds) { [self] in
                    startWaiting(user)
                }
            }
            waiting.append(descriptor)
            table.waiting[uid] = waiting
            return next
        }
        if let wait {
            if wait == now { close(descriptor) }
            return
        }
        send([descriptor], to: uid)
    }

    /// Starts the worker of `uid` once its restart interval passed, with the connections that
    /// waited for it.
    private func startWaiting(_ uid: uid_t) {
        let waiting = table.withLock { $0.waiting.removeValue(forKey: uid) ?? [] }
        send(waiting, to: uid)
    }

    /// Sends `descriptors` to the worker of `uid` (started when none runs), then closes the
    /// front's copies. A worker that died before it was reaped is replaced once.
    private func send(_ descriptors: [Int32], to uid: uid_t) {
        defer { for descriptor in descriptors { close(descriptor) } }
        for attempt in 0..<2 {
            guard let worker = worker(of: uid) else { return }
            var remaining = descriptors
            while let descriptor = remaining.first, kc_send_descriptor(worker.channel, descriptor) == 0 {
                remaining.removeFirst()
            }
            guard !remaining.isEmpty else { return }
            logger.warning(
                "the worker of uid \(uid) (pid \(worker.pid)) takes no connection: \(String(cString: strerror(errno)))")
            kill(worker.pid, SIGKILL)
            table.withLock { table in
                if table.workers[uid]?.pid == worker.pid { table.workers[uid] = nil }
            }
            if attempt == 1 { return }
        }
    }

    /// The running worker of `uid`, started now when there is none; nil when it cannot start.
    private func worker(of uid: uid_t) -> Worker? {
        if let running = table.withLock({ $0.workers[uid] }) { return running }
        guard let started = launch(uid) else { return nil }
        return table.withLock { table in
            if table.stopping {
                kill(started.pid, SIGKILL)
                close(started.channel)
                return nil
            }
            if let running = table.workers[uid] {
                // Another connection started one meanwhile: keep that one.
                kill(started.pid, SIGKILL)
                close(started.channel)
                return running
            }
            table.workers[uid] = started
            table.nextStart[uid] = started.started + Self.restartInterval
            return started
        }
    }

    // MARK: Workers

    /// Starts the worker of `uid`: its directory made (0700) for the kernel to confine it to,
    /// then `keychaind --system-worker UID` with its end of a new channel as standard input.
    private func start(_ uid: uid_t) -> Worker? {
        let directory = settings.stateDirectory.appendingPathComponent(String(uid))
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
            logger.error("cannot make \(directory.path): \(String(cString: strerror(errno)))")
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard kc_socketpair_seqpacket(&ends) == 0 else {
            logger.error("cannot make a channel for the worker of uid \(uid): \(String(cString: strerror(errno)))")
            return nil
        }
        defer { close(ends[1]) }
        let arguments =
            [
                "keychaind", "--system-worker", String(uid), "--state-directory", settings.stateDirectory.path,
                "--runtime-directory", settings.runtimeDirectory.path, "--memory-limit",
                String(settings.memoryLimit >> 20),
            ] + settings.workerArguments
        var environment = ProcessInfo.processInfo.environment
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { environment[name] = nil }
        // SQLite's temporary files (a large sort) where the worker's Landlock domain lets it write.
        environment["SQLITE_TMPDIR"] = directory.path
        let spawned = CleanSpawn.spawn(
            executable, arguments: arguments, environment: environment,
            standardStreams: (.descriptor(ends[1]), .inherited, .inherited))
        guard case .success(let pid) = spawned else {
            close(ends[0])
            logger.error("cannot start the worker of uid \(uid): \(spawned)")
            return nil
        }
        logger.info("worker started", metadata: ["uid": "\(uid)", "pid": "\(pid)"])
        return Worker(pid: pid, channel: ends[0], started: .now)
    }

    /// One start asked of the launching thread, and its answer.
    private final class Launch: Sendable {
        let uid: uid_t
        let answer = Mutex<Worker?>(nil)
        let done = DispatchSemaphore(value: 0)
        init(uid: uid_t) { self.uid = uid }
    }

    /// The worker of `uid`, started by the launching thread.
    private func launch(_ uid: uid_t) -> Worker? {
        let launch = Launch(uid: uid)
        launches.withLock { $0.append(launch) }
        launchRequested.signal()
        launch.done.wait()
        return launch.answer.withLock { $0 }
    }

    /// Starts the workers asked for, one after another, for the front's life.
    private func launchWorkers() {
        while true {
            launchRequested.wait()
            guard let next = launches.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            let started = start(next.uid)
            next.answer.withLock { $0 = started }
            next.done.signal()
        }
    }

    /// Waits for workers to end, and forgets each that did: its user's next connection starts
    /// another. Runs on a thread of its own for the front's life.
    private func reapWorkers() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, 0)
            if pid < 0 {
                if errno == EINTR { continue }
                if table.withLock({ $0.stopping }) { return }
                usleep(100_000)
                continue
            }
            let ended = table.withLock { table -> (uid_t, Worker)? in
                guard let (uid, worker) = table.workers.first(where: { $0.value.pid == pid }) else { return nil }
                table.workers[uid] = nil
                return (uid, worker)
            }
            guard let (uid, worker) = ended else { continue }
            close(worker.channel)
            let how =
                status & 0x7F == 0
                ? "exited with status \((status >> 8) & 0xFF)" : "was ended by signal \(status & 0x7F)"
            let level: Logger.Level = status == 0 ? .info : .error
            logger.log(
                level: level, "the worker of uid \(uid) (pid \(pid)) \(how); its user's next connection starts another")
        }
    }

    /// Ends every worker: SIGTERM, then SIGKILL after 10 s, by pid.
    private func stopWorkers() {
        let workers = table.withLock { table -> [Worker] in
            table.stopping = true
            for descriptors in table.waiting.values { descriptors.forEach { close($0) } }
            table.waiting = [:]
            return Array(table.workers.values)
        }
        for worker in workers { kill(worker.pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !table.withLock({ $0.workers.isEmpty }) { usleep(20_000) }
        for worker in table.withLock({ Array($0.workers.values) }) { kill(worker.pid, SIGKILL) }
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
