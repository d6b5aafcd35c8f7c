import CKeychainSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading another process's `/proc/PID` entries, as the daemon does to know its callers and the
/// Secret Service bridge to name its D-Bus clients.
public enum ProcessFiles {
    /// An entry of `/proc/PID` that only a process allowed to inspect PID may open (C's
    /// `KC_PROCESS_` values), or files in its root, which a Landlock domain does not reach in a
    /// sandbox's mount namespace: a system worker, confined by Landlock, has its process
    /// inspector open them (``open(_:_:)``).
    public enum GuardedEntry: Int32, Sendable {
        /// The file the process runs, opened `O_PATH`.
        case executable = 1
        /// `/proc/PID/maps`.
        case memoryMap = 2
        /// Its root directory, opened `O_PATH`.
        case root = 3
        /// Its user namespace.
        case userNamespace = 4
        /// The environment block it started with.
        case environment = 5
        /// The file it runs, opened for reading.
        case executableContents = 6
        /// `/.flatpak-info` in its root, when that is a regular file.
        case flatpakInfo = 7
    }

    /// The whole of `/proc/PID/NAME` (an entry anyone may read: `stat`, `status`, `cmdline`),
    /// read to its end (`/proc` files show a size of 0).
    public static func read(_ pid: Int32, _ name: String) -> [UInt8]? {
        let descriptor = Glibc.open("/proc/\(pid)/\(name)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return readToEnd(descriptor)
    }

    /// `entry` of process `pid`, opened close-on-exec (through the process inspector in a system
    /// worker: ``kc_process_open``); nil when it is not running or may not be inspected. The
    /// caller closes it.
    public static func open(_ pid: Int32, _ entry: GuardedEntry) -> Int32? {
        let descriptor = kc_process_open(pid, entry.rawValue)
        return descriptor >= 0 ? descriptor : nil
    }

    /// The whole of `entry` of process `pid`, read to its end.
    ///
    /// Room for all of it is taken at once where the file says its size (the inspector's copy
    /// of an environment), or 64 KiB (`/proc` files say 0): a block that grows leaves its
    /// earlier copies, unwiped, in freed memory, and an environment may hold secrets.
    public static func read(_ pid: Int32, _ entry: GuardedEntry) -> [UInt8]? {
        guard let descriptor = open(pid, entry) else { return nil }
        defer { close(descriptor) }
        var info = stat()
        let size = fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
        return readToEnd(descriptor, room: size > 0 ? size : 1 << 16)
    }

    /// What `descriptor` holds from where it stands to its end, in a block of `room` bytes to
    /// begin with.
    static func readToEnd(_ descriptor: Int32, room: Int = 0) -> [UInt8]? {
        var contents: [UInt8] = []
        contents.reserveCapacity(room)
        // Not zeroed first: only what the kernel wrote is kept (zeroing 16 KiB was a third of
        // reading a process's `stat`).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { buffer -> [UInt8]? in
            while true {
                let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return nil }
                if count == 0 { return contents }
                contents.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }

    /// The environment process `pid` started with: its `NAME=value` entries, each ended by a
    /// zero byte. `/proc/PID/environ` is readable by the process's owner alone (by root alone
    /// once the process made itself undumpable), so the system daemon, which has no
    /// `CAP_DAC_READ_SEARCH`, has the same block copied from the process's memory (between
    /// `env_start` and `env_end` of `/proc/PID/stat`, with `process_vm_readv` and its
    /// inspector's `CAP_SYS_PTRACE`). The block may hold the caller's secrets (tokens in
    /// variables): callers take what they need as bytes and wipe it. Nil when it cannot be read.
    public static func environmentBlock(_ pid: Int32) -> [UInt8]? {
        read(pid, .environment)
    }

    /// Zeroes `bytes` (a block that may hold a secret) where they lie.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }

    /// The path of the program process `pid` runs (`/proc/PID/exe`); nil when it is not running
    /// or may not be inspected (an undumpable process of another user).
    public static func executable(_ pid: Int32) -> String? {
        guard let descriptor = open(pid, .executable) else { return nil }
        defer { close(descriptor) }
        return linkTarget(ofDescriptor: descriptor)
    }

    /// What the kernel names the file `descriptor` refers to (`/proc/self/fd/N`): a path, with
    /// " (deleted)" after it once the file is gone, or a namespace's `user:[4026531837]`.
    public static func linkTarget(ofDescriptor descriptor: Int32) -> String? {
        linkTarget(atPath: "/proc/self/fd/\(descriptor)")
    }

    /// What the symbolic link at `path` holds (one of this process's own `/proc/self` links, say).
    public static func linkTarget(atPath path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// When process `pid` started, in clock ticks after boot (field 22 of `/proc/PID/stat`); nil
    /// when it is not running.
    public static func startTime(_ pid: Int32) -> UInt64? {
        read(pid, "stat").flatMap(startTime(ofStat:))
    }

    /// The start time a `/proc/PID/stat` text gives (field 22); nil when it has none.
    static func startTime(ofStat stat: [UInt8]) -> UInt64? {
        statNumber(19, of: stat).flatMap { UInt64(exactly: $0) }
    }

    /// Field `index` of a `/proc/PID/stat` text, counted from the third (`state`, index 0): field
    /// N of proc(5) is at index N - 3. The command name before them is in parentheses and may
    /// hold anything (a `)`, spaces, bytes that are not UTF-8), so they are counted from the
    /// text's last `)`. Nil when the text has no such field or it is not a decimal integer (the
    /// state's letter).
    ///
    /// Read in place, as bytes: splitting the text into strings first, for the one or two fields
    /// a caller needs, cost some 25,000 instructions a read (callgrind), and the Secret Service
    /// bridge and keychaind read it several times for each new client.
    public static func statNumber(_ index: Int, of stat: [UInt8]) -> Int64? {
        guard index >= 0, let end = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // Fields are runs of bytes between spaces; the text ends with a newline.
        let separates = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") }
        var field = -1
        var position = end + 1
        while position < stat.count {
            guard !separates(stat[position]) else {
                position += 1
                continue
            }
            field += 1
            var fieldEnd = position
            while fieldEnd < stat.count && !separates(stat[fieldEnd]) { fieldEnd += 1 }
            if field == index {
                return stat[position..<fieldEnd].withUnsafeBufferPointer {
                    Int64(String(decoding: $0, as: UTF8.self))
                }
            }
            position = fieldEnd
        }
        return nil
    }

    /// Field `index` of process `pid`'s `/proc/PID/stat` (``statNumber(_:of:)``); nil when it is
    /// not running or the field is not a number.
    public static func statNumber(_ index: Int, ofProcess pid: Int32) -> Int64? {
        read(pid, "stat").flatMap { statNumber(index, of: $0) }
    }
}
