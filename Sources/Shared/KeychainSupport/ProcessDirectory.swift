#if canImport(Glibc)
import Glibc
#endif
import KeychainProtocol

/// A process's `/proc/PID` directory, held open: it stays that process's, so what is read
/// through it is never another process's that took the pid after this one ended (its entries
/// answer nothing then), and reading an entry is one system call with no walk of `/proc`.
///
/// The Secret Service bridge holds one for each D-Bus client, to check at every call that the
/// client still runs the program it connected with; opening `/proc/PID` anew for each check
/// (five system calls) was a tenth of the bridge's time in a lookup.
public final class ProcessDirectory {
    private let descriptor: Int32

    /// `/proc/PID` of the process `process` names; nil when it is not running, or when its pid
    /// is another process's (started at another time) by the time it is opened.
    public init?(_ process: ProcessReference) {
        let descriptor = open("/proc/\(process.pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard Self.startTime(descriptor) == process.startTime else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The path of the program the process runs now (`exe`); nil once it has ended, or when it
    /// may not be inspected (undumpable).
    public var executable: String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX) + 1) { buffer -> String? in
            let count = readlinkat(descriptor, "exe", buffer.baseAddress!, buffer.count - 1)
            guard count > 0 else { return nil }
            return String(
                decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count), as: UTF8.self)
        }
    }

    /// When the process of `/proc/PID` open at `descriptor` started, in clock ticks after boot
    /// (field 22 of its `stat`).
    private static func startTime(_ descriptor: Int32) -> UInt64? {
        let stat = openat(descriptor, "stat", O_RDONLY | O_CLOEXEC)
        guard stat >= 0 else { return nil }
        defer { close(stat) }
        return ProcessFiles.readToEnd(stat).flatMap(ProcessFiles.startTime(ofStat:))
    }
}
