import CKeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// Keeps a process that holds keychain secrets out of core dumps and debuggers
/// (DESIGN.md, Data protection: "the daemon not dumpable").
public enum ProcessHardening {
    /// Sets the core-file limit to zero and marks the process not dumpable, which also stops
    /// other processes of the same user from attaching with ptrace or reading its memory
    /// through /proc. Call it first thing in a program that handles secrets; a program that
    /// talks to the per-user keychaind calls it after `DaemonTransport.identifyThisProcess()`,
    /// for that daemon cannot read an undumpable process's `/proc/PID/exe` to learn who it is.
    public static func apply() {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
        _ = kc_set_not_dumpable()
    }

    /// True when the process can be dumped or traced by its user.
    public static var isDumpable: Bool { kc_is_dumpable() != 0 }
}
