import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where the keychain keeps its files (XDG, DESIGN.md "Conventions").
///
/// - The keychain: `$XDG_DATA_HOME/keychain`, or `~/.local/share/keychain`.
/// - The per-user `keychaind`'s socket: `$XDG_RUNTIME_DIR/keychain/socket`, in a directory only
///   the user can enter (checked and made 0700 like the keychain directory). Without
///   `XDG_RUNTIME_DIR` (no login session: a cron job, a container) it is in the runtime
///   directory logind made for the user (`/run/user/<uid>/keychain`) when there is one, else
///   in the home directory (`~/.local/state/keychain-runtime`): never in `/tmp`, where another
///   user could create the directory first and make the keychain unusable.
public enum KeychainPaths {
    /// `$XDG_DATA_HOME/keychain`, or `~/.local/share/keychain` when `XDG_DATA_HOME` is unset.
    public static func keychainDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appendingPathComponent("keychain")
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/keychain")
    }

    /// The directory of the socket and the daemon's lock.
    public static func runtimeDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        URL(fileURLWithPath: runtimeDirectoryPath(environment: environment))
    }

    /// ``runtimeDirectory(environment:)`` as a path, from `environment`, or with nil from this
    /// process's environment read variable by variable (`getenv`), which a client's first
    /// request takes instead of building the whole environment as a dictionary.
    public static func runtimeDirectoryPath(environment: [String: String]?) -> String {
        let runtime = environment.map { $0["XDG_RUNTIME_DIR"] } ?? getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        guard var runtime, runtime.hasPrefix("/") else {
            let home = environment.map { $0["HOME"] } ?? getenv("HOME").map { String(cString: $0) }
            return fallbackRuntimePath(logind: "/run/user/\(getuid())", home: home)
        }
        while runtime.count > 1 && runtime.hasSuffix("/") { runtime.removeLast() }
        return runtime == "/" ? "/keychain" : runtime + "/keychain"
    }

    /// The runtime directory without `XDG_RUNTIME_DIR`: `logind/keychain` when `logind` is a
    /// directory of this user's that nobody else can write, else under `home` (the account's
    /// home when `home` is not an absolute path).
    public static func fallbackRuntimePath(logind: String, home: String?) -> String {
        var info = stat()
        if stat(logind, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & (S_IWGRP | S_IWOTH) == 0
        {
            return logind + "/keychain"
        }
        var base =
            home.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? getpwuid(getuid()).map {
                String(cString: $0.pointee.pw_dir)
            } ?? "/"
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        return (base == "/" ? "" : base) + "/.local/state/keychain-runtime"
    }

    /// The file in a keychain directory that processes take turns on (`flock`) before they
    /// change the Enclave's state, or move the keychain elsewhere.
    public static let enclaveLockName = "enclave.lock"

    /// The database file in a keychain directory: the sealed rows (KeychainStore's).
    public static let databaseFileName = "keychain.db"

    /// The directory in a keychain directory where the simulated fingerprint sensor takes its
    /// touches.
    public static let simulatedSensorName = "sensor"

    /// The socket's file name in ``runtimeDirectory(environment:)``.
    public static let socketName = "socket"
    /// Held by the running daemon for its whole life: at most one daemon per directory.
    public static let daemonLockName = "daemon.lock"
    /// Held by a client while it starts a daemon: racing clients start one.
    public static let startLockName = "start.lock"

    /// The system daemon's socket (`keychaind --system`): clients look here first, at this
    /// fixed path, and trust what listens only when the socket and the process belong to
    /// ``systemUserName``.
    public static let systemSocket = "/run/keychain/socket"
    /// Where the system daemon keeps each user's keychain, in `<uid>/` (0700, the daemon's user).
    public static let systemStateDirectory = "/var/lib/keychain"
    /// The system daemon's app registry: one root-owned JSON file per app.
    public static let systemAppRegistry = "/etc/keychain/apps.d"
    /// The system user `keychaind --system` runs as, created by `keychainctl daemon install --system`.
    public static let systemUserName = "keychaind"
}
