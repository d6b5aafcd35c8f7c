import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading another process's `/proc/PID` entries, as the daemon does to know its callers.
enum ProcessFiles {
    /// The whole of `/proc/PID/NAME`, read to its end (`/proc` files show a size of 0).
    static func read(_ pid: Int32, _ name: String) -> [UInt8]? {
        let descriptor = open("/proc/\(pid)/\(name)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents: [UInt8] = []
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

    /// The fields of `/proc/PID/stat` from the third (`state`) on (``statFields(of:)``).
    static func statFields(_ pid: Int32) -> [String]? {
        read(pid, "stat").flatMap(statFields(of:))
    }

    /// The fields of a `/proc/PID/stat` text from the third (`state`) on: the command name
    /// before them is in parentheses and may hold anything (a `)`, spaces, bytes that are not
    /// UTF-8), so they are counted from the text's last `)`. Field N of proc(5) is at index N - 3.
    ///
    /// Read as bytes: as a `String` (Character by Character, which segments graphemes) this was
    /// 226,000 instructions a connection, more than answering its request.
    static func statFields(of stat: [UInt8]) -> [String]? {
        guard let end = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        return stat[(end + 1)...].withUnsafeBufferPointer { fields in
            fields.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
