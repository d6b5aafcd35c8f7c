#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reading another process's `/proc/PID` entries, as the daemon does to know its callers.
enum ProcessFiles {
    /// The whole of `/proc/PID/NAME`, read to its end (`/proc` files show a size of 0).
    static func read(_ pid: Int32, _ name: String) -> [UInt8]? {
        let descriptor = open("/proc/\(pid)/\(name)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return contents }
            contents += buffer[0..<count]
        }
    }

    /// The fields of `/proc/PID/stat` from the third (`state`) on: the command name before them
    /// is in parentheses and may hold anything, so they are counted from its closing one. Field
    /// N of proc(5) is at index N - 3.
    static func statFields(_ pid: Int32) -> [Substring]? {
        guard let bytes = read(pid, "stat") else { return nil }
        let stat = String(decoding: bytes, as: UTF8.self)
        guard let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }
}
