import Foundation
import KeychainProtocol
import KeychainSupport
import Synchronization

/// The keychain served by `keychaind`, which holds the keys, checks the passcode, matches
/// fingerprints and keeps what authentications earned; this process sends requests and gets
/// results, never a key or a grant. The daemon knows who is calling from the kernel: an app
/// sees its own items only (its access group is its executable), whatever it claims.
///
/// Where the daemon is: the system daemon (``SystemDaemon``) when one is installed, else this
/// user's, which is started on the first request when none runs. If the daemon restarts, the
/// next request reconnects; an authentication context's earlier success does not carry over
/// (the daemon forgot it with the connection).
public final class DaemonTransport: KeychainTransport {
    /// Which daemon a transport talks to.
    private enum Endpoint: Sendable {
        /// This user's, at `$XDG_RUNTIME_DIR/keychain/socket`, started with these arguments;
        /// the environment its paths come from, nil for this process's.
        case perUser(environment: [String: String]?, daemonArguments: [String])
        /// The system daemon listening at this socket, trusted only as ``SystemDaemon`` checks.
        case system(socket: String)
    }

    private let connection: Mutex<DaemonConnection?>
    private let endpoint: Endpoint
    /// The process each connection acts for (``KeychainRequest/actForProcess(_:)``); nil for
    /// this process.
    private let actingFor: ProcessReference?
    /// The app keychaind took ``actingFor`` to be, from the last connection's first answer.
    private let actingApp = Mutex<String?>(nil)

    /// A transport to the system daemon when one is installed (its socket is at
    /// ``KeychainPaths/systemSocket``), else to the daemon of this user
    /// (`$XDG_RUNTIME_DIR/keychain/socket`).
    ///
    /// - Parameters:
    ///   - environment: the environment the per-user daemon's paths come from and that a daemon
    ///     this transport starts gets; nil (the default) for this process's.
    ///   - daemonArguments: `keychaind`'s arguments, should this transport start a per-user
    ///     daemon.
    public convenience init(environment: [String: String]? = nil, daemonArguments: [String] = []) {
        if SystemDaemon.isInstalled {
            self.init(systemSocket: KeychainPaths.systemSocket)
        } else {
            self.init(perUserEnvironment: environment, daemonArguments: daemonArguments)
        }
    }

    /// A transport to this user's daemon alone, even where a system daemon is installed.
    public init(perUserEnvironment environment: [String: String]?, daemonArguments: [String] = []) {
        endpoint = .perUser(environment: environment, daemonArguments: daemonArguments)
        connection = Mutex(nil)
        actingFor = nil
    }

    /// A transport to the system daemon listening at `socket`, which must belong, with the
    /// process behind it, to the keychaind user: the explicit way (for tests, or a second
    /// installation) to reach a system daemon elsewhere than ``KeychainPaths/systemSocket``.
    public init(systemSocket socket: String) {
        endpoint = .system(socket: socket)
        connection = Mutex(nil)
        actingFor = nil
    }

    /// A transport whose requests are answered as those of `process`, another process of this
    /// user, which keychaind identifies itself: each connection it opens (to the system daemon
    /// when one is installed, else to this user's) names `process` first. Only a program
    /// keychaind trusts to do so may: the Secret Service bridge (`keychain-secret-service`),
    /// which asks for each of its D-Bus clients as that client.
    ///
    /// - Throws (from the first request): `errSecMissingEntitlement` for a program keychaind
    ///   does not trust to act for others, `errSecInteractionNotAllowed` when `process` is not
    ///   running, runs as another user, or was not started at its start time.
    ///
    /// - Parameter systemSocket: the system daemon's socket where it is not at
    ///   ``KeychainPaths/systemSocket`` (a test's, a second installation's), checked as
    ///   ``init(systemSocket:)`` checks it.
    public init(actingFor process: ProcessReference, environment: [String: String]? = nil, systemSocket: String? = nil)
    {
        endpoint =
            if let systemSocket {
                .system(socket: systemSocket)
            } else if SystemDaemon.isInstalled {
                .system(socket: KeychainPaths.systemSocket)
            } else {
                .perUser(environment: environment, daemonArguments: [])
            }
        connection = Mutex(nil)
        actingFor = process
    }

    /// A transport on a connection already open to this user's daemon.
    init(connection: sending DaemonConnection, environment: [String: String]?) {
        endpoint = .perUser(environment: environment, daemonArguments: [])
        self.connection = Mutex(connection)
        actingFor = nil
    }

    /// Connects now (starting the per-user daemon if none runs) and waits until the daemon has
    /// identified this process, so that the process may then make itself undumpable
    /// (``ProcessHardening``). A per-user daemon has no `CAP_SYS_PTRACE`, and the kernel lets
    /// it read `/proc/PID/exe` of a dumpable process only: an undumpable client that connects
    /// later is refused. The system daemon has the capability, so nothing is exchanged for it.
    /// Should the daemon restart later, an undumpable process cannot reconnect.
    ///
    /// The daemon greets a connection only once it has identified the process, so an open
    /// connection of this process is the proof; no request is sent.
    public func identifyThisProcess() throws(KeychainError) {
        guard case .perUser = endpoint else { return }
        try connectUnlessConnected()
    }

    /// Opens a connection unless this process has one open.
    private func connectUnlessConnected() throws(KeychainError) {
        try connection.withLock { (connection: inout DaemonConnection?) throws(KeychainError) in
            if let connection, connection.owner == getpid() { return }
            connection = try connect()
        }
    }

    public func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        var body = RequestCoder.encode(request)
        defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        var reply = try exchange(body)
        defer { reply.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        return try Self.decode(reply, naming: "reply").get()
    }

    /// Sends `request` on a new connection, closed after the reply: the open one may be
    /// waiting for a sheet.
    public func performBeside(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        var body = RequestCoder.encode(request)
        defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        let beside = try connect()
        let reply: [UInt8]
        do throws(DaemonConnection.Failure) {
            reply = try beside.exchange(body)
        } catch {
            throw KeychainError(.errSecIO, "keychaind did not answer on a second connection")
        }
        return try Self.decode(reply, naming: "reply").get()
    }

    /// A reply or greeting from keychaind: `errSecDecode`, naming `what`, when it cannot be read.
    static func decode(
        _ bytes: [UInt8], naming what: String
    ) throws(KeychainError) -> Result<KeychainReply, KeychainError> {
        do throws(WireError) {
            return try ReplyCoder.decode(bytes)
        } catch {
            throw KeychainError(
                .errSecDecode,
                "keychaind's \(what) could not be read (\(error.reason)); is it the same version as this program?")
        }
    }

    /// Sends on the open connection, or on a new one; a request that never left is sent once
    /// more on a new connection (the daemon may have restarted), one that left is not.
    private func exchange(_ body: [UInt8]) throws(KeychainError) -> [UInt8] {
        let outcome: Result<[UInt8], KeychainError> = connection.withLock { connection in
            for attempt in 0..<2 {
                let open: DaemonConnection
                // A child of the process that connected has the socket but is not the process
                // the daemon identified: it connects anew (its copy of the socket closes).
                if let connection, connection.owner == getpid() {
                    open = connection
                } else {
                    do throws(KeychainError) {
                        open = try connect()
                    } catch {
                        return .failure(error)
                    }
                }
                connection = open
                do throws(DaemonConnection.Failure) {
                    return .success(try open.exchange(body))
                } catch {
                    connection = nil
                    switch error {
                    case .notSent(let code) where attempt == 1:
                        return .failure(
                            KeychainError(.errSecIO, "cannot send to keychaind: \(String(cString: strerror(code)))"))
                    case .notSent:
                        continue
                    case .noReply(let reason):
                        return .failure(
                            KeychainError(
                                .errSecIO,
                                "keychaind did not answer (\(reason)); the request may or may not have been carried out"
                            ))
                    }
                }
            }
            return .failure(KeychainError(.errSecIO, "keychaind does not answer"))
        }
        return try outcome.get()
    }

    private func connect() throws(KeychainError) -> DaemonConnection {
        let connection =
            switch endpoint {
            case .perUser(let environment, let arguments):
                try DaemonLauncher.connect(environment: environment, arguments: arguments)
            case .system(let socket): try SystemDaemon.connect(socket)
            }
        guard let actingFor else { return connection }
        let reply: [UInt8]
        do throws(DaemonConnection.Failure) {
            reply = try connection.exchange(RequestCoder.encode(.actForProcess(actingFor)))
        } catch {
            throw KeychainError(.errSecIO, "keychaind did not answer when asked to act for pid \(actingFor.pid)")
        }
        if case .actingFor(let app) = try Self.decode(reply, naming: "reply").get() {
            actingApp.withLock { $0 = app }
        }
        return connection
    }

    /// Where the keychain stood when a ``DaemonTransport/changeStamp()`` was taken: its change
    /// number, as the transport's open connection reads it. Two stamps are equal when both were
    /// read on the same connection and the number had not moved between them.
    public struct ChangeStamp: Sendable, Equatable {
        fileprivate let mapping: ChangeNumberMapping
        fileprivate let number: UInt64

        public static func == (left: ChangeStamp, right: ChangeStamp) -> Bool {
            left.mapping === right.mapping && left.number == right.number
        }
    }

    /// Where the keychain stands now, for a caller that keeps an answer of keychaind's while
    /// nothing it could depend on changes (the Secret Service bridge's kept searches): taken
    /// before the request whose answer is kept, so that a change while it is answered makes the
    /// answer stale at once. The first time on a connection, keychaind is asked for its change
    /// number (``KeychainRequest/watchChanges``: one request, the bridge's alone); after that it
    /// is read in memory. A connection keychaind closed (it stopped) is replaced by a new one,
    /// to the daemon serving now. Nil when no daemon answers, or it shares no number.
    public func changeStamp() -> ChangeStamp? {
        connection.withLock { connection in
            if let open = connection, open.owner != getpid() || open.hasInput { connection = nil }
            if connection == nil { connection = try? connect() }
            guard let open = connection else { return nil }
            if !open.askedForChangeNumber {
                open.askedForChangeNumber = true
                guard let reply = try? open.exchange(RequestCoder.encode(.watchChanges)) else {
                    connection = nil
                    return nil
                }
                if case .success(.done)? = try? Self.decode(reply, naming: "reply") {
                    open.changeNumber = open.receiveDescriptor().flatMap(ChangeNumberMapping.init(descriptor:))
                }
            }
            return open.changeNumber.map { ChangeStamp(mapping: $0, number: $0.value) }
        }
    }

    /// True when nothing a search could see changed since `stamp` was taken: the same
    /// connection is open, nothing waits on it (keychaind writes nothing unasked, so a readable
    /// connection is one it closed: it stopped, and another may serve the keychain), and the
    /// change number has not moved. Reads memory and polls the connection: no request.
    public func isUnchanged(since stamp: ChangeStamp) -> Bool {
        connection.withLock { connection in
            guard let open = connection, open.owner == getpid(), open.changeNumber === stamp.mapping,
                !open.hasInput
            else { return false }
            return stamp.mapping.value == stamp.number
        }
    }

    /// The app keychaind decided the process this transport acts for is, by its own rules
    /// (connecting first if need be). keychaind says so in its answer to the connection's first
    /// request, which names the process: no other request is sent.
    ///
    /// - Throws: what acting for the process throws (``init(actingFor:environment:systemSocket:)``);
    ///   `errSecParam` for a transport that acts for no other process.
    public func appActedFor() throws(KeychainError) -> String {
        guard actingFor != nil else { throw KeychainError(.errSecParam, "this transport acts for no other process") }
        try connectUnlessConnected()
        guard let app = actingApp.withLock({ $0 }) else {
            throw KeychainError(.errSecInternalComponent, "keychaind did not say which app it acts for")
        }
        return app
    }
}
