import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// Starts `keychaind` on demand, as gpg-agent is started: the first client that finds no daemon
/// starts one and waits for its socket. Racing clients take `start.lock` in turn and check
/// again under it, so they start one daemon; the daemon's own lock makes a second one give up.
enum DaemonLauncher {
    /// How long a client waits for a daemon it started to listen.
    static let startTimeout: Double = 10

    /// A connection to the running daemon, starting one when none answers.
    ///
    /// - Throws: `errSecIO` when no daemon can be started (the message names its log file);
    ///   `errSecInvalidKeychain` when the runtime directory could be changed by another user.
    /// - Parameters:
    ///   - environment: where the paths come from, and what a started daemon gets; nil for
    ///     this process's environment.
    ///   - arguments: `keychaind`'s arguments, should it be started.
    static func connect(environment: [String: String]?, arguments: [String]) throws(KeychainError) -> DaemonConnection {
        let runtime = KeychainPaths.runtimeDirectoryPath(environment: environment)
        let socket = runtime + "/" + KeychainPaths.socketName
        if let connection = try DaemonConnection(path: socket) { return connection }
        let directory = try KeychainDirectory(URL(fileURLWithPath: runtime), creating: true)
        let lock = open(
            directory.url.appendingPathComponent(KeychainPaths.startLockName).path,
            O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw KeychainError(.errSecIO, "cannot open the daemon's start lock in \(runtime)") }
        defer { close(lock) }
        flock(lock, LOCK_EX)
        if let connection = try DaemonConnection(path: socket) { return connection }
        let log = directory.url.appendingPathComponent("keychaind.log").path
        try start(DaemonLocation.keychaind(), arguments: arguments, environment: environment, log: log)
        let deadline = Date().addingTimeInterval(startTimeout)
        while Date() < deadline {
            if let connection = try DaemonConnection(path: socket) { return connection }
            usleep(20_000)
        }
        throw KeychainError(.errSecIO, "keychaind did not start within \(Int(startTimeout)) s; its log is \(log)")
    }

    /// Starts `daemon` detached: in a session of its own (a Ctrl-C at this terminal does not
    /// reach it), with the default signal mask and dispositions, no descriptor of ours, and its
    /// log appended to `log`. A shell in between exits at once, so the daemon is nobody's child
    /// here and this program is not left with a zombie when it stops.
    private static func start(
        _ daemon: String, arguments daemonArguments: [String], environment: [String: String]?, log: String
    ) throws(KeychainError) {
        let arguments =
            ["/bin/sh", "-c", "log=$1; shift; \"$0\" \"$@\" </dev/null >/dev/null 2>>\"$log\" &", daemon, log]
            + daemonArguments
        // The daemon gets the environment its paths were computed from.
        let pid: pid_t
        switch CleanSpawn.spawn(
            "/bin/sh", arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
            standardStreams: (.inherited, .inherited, .inherited))
        {
        case .success(let child): pid = child
        case .failure(let error):
            throw KeychainError(.errSecIO, "cannot start keychaind: \(String(cString: strerror(error.code.rawValue)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}
