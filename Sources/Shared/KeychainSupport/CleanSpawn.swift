import CKeychainSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `posix_spawn` as the keychain starts its helpers (a pinentry, a detached keychaind): the
/// child starts with an empty signal mask and every signal at its default disposition, in a
/// session of its own, and holds no descriptor of the parent's but those `standardStreams`
/// names (a multi-threaded parent's other descriptors, `O_CLOEXEC` or not, are closed at exec).
public enum CleanSpawn {
    /// What one of the child's standard streams is.
    public enum Stream: Sendable {
        /// The parent's own, inherited.
        case inherited
        /// This descriptor of the parent's, duplicated onto the stream.
        case descriptor(Int32)
        /// `/dev/null`.
        case null
    }

    /// Starts `path` with `arguments` (the first is the program's name) and `environment`, its
    /// standard input, output and error as `standardStreams` says; the child's pid, or the error
    /// `posix_spawn` gave.
    public static func spawn(
        _ path: String, arguments: [String], environment: [String: String],
        standardStreams: (input: Stream, output: Stream, error: Stream)
    ) -> Result<pid_t, POSIXError> {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        _ = kc_spawnattr_reset_signals(&attributes, 1)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [
            (Int32(0), standardStreams.input), (1, standardStreams.output), (2, standardStreams.error),
        ] {
            switch stream {
            case .inherited: break
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        _ = kc_spawn_file_actions_closefrom(&actions, 3)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in argv + envp { free(entry) } }
        var child: pid_t = 0
        let failed = posix_spawn(&child, path, &actions, &attributes, &argv, &envp)
        guard failed == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: failed) ?? .EIO)) }
        return .success(child)
    }
}
