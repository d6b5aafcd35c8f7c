#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation

/// Whether the system daemon can trust that a native process is the program its executable
/// names: Linux's counterpart of macOS's hardened runtime with library validation.
///
/// A process is trusted when
/// - the file it runs (opened through `/proc/PID/exe`, so the very inode, not a path that could
///   have been swapped since) belongs to root and nobody else can write it, and its path still
///   names that file;
/// - every directory above it belongs to root and nobody else can write it (unless sticky, as
///   `/tmp` is, where only an entry's owner can rename it);
/// - it is not being traced (`TracerPid` 0 in `/proc/PID/status`);
/// - its environment as the dynamic loader saw it (the block between `env_start` and `env_end`
///   of `/proc/PID/stat`, read with `process_vm_readv`: `/proc/PID/environ` is readable by its
///   owner alone, and the daemon has no `CAP_DAC_READ_SEARCH`) sets none of `LD_PRELOAD`,
///   `LD_AUDIT` and `LD_LIBRARY_PATH`;
/// - every executable mapping (`/proc/PID/maps`: the libraries it loaded) comes from a file that
///   passes the same ownership checks.
///
/// What it does not cover: a library loaded after the check (`dlopen` of a root-owned library
/// is no risk; the environment check keeps a user's from being loaded at start), and a
/// debugger attached after the check, which ``stillUntraced(_:executable:)`` catches at the
/// next request.
enum ExecutableTrust {
    /// Variables with which the dynamic loader runs code of the caller's choice.
    static let loaderVariables = ["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH"]

    /// The file a process runs, as `(device, inode)`: what ``stillUntraced(_:executable:)``
    /// compares.
    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// Nil when process `pid`, running `executable`, is trusted; otherwise why not.
    static func reasonToDistrust(pid: Int32, executable: String) -> String? {
        guard !executable.hasSuffix(" (deleted)") else { return "its executable was deleted or replaced after it started" }
        guard let running = runningFile(pid) else { return "its executable cannot be inspected" }
        var named = stat()
        guard stat(executable, &named) == 0, named.st_dev == running.st_dev, named.st_ino == running.st_ino else {
            return "\(executable) names another file than the one it runs"
        }
        var checked = Set<String>()
        if let reason = reasonToDistrust(file: executable, info: running, checked: &checked) { return reason }
        if let tracer = tracer(of: pid), tracer != 0 { return "it is being traced (by pid \(tracer))" }
        guard let environment = initialEnvironment(pid) else { return "its environment cannot be read" }
        for entry in environment.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            for variable in loaderVariables where text.hasPrefix(variable + "=") && text.count > variable.count + 1 {
                return "its environment sets \(variable), which loads code of the caller's choice"
            }
        }
        guard let maps = procFile(pid, "maps").map({ String(decoding: $0, as: UTF8.self) }) else { return "its memory map cannot be read" }
        for line in maps.split(separator: "\n") {
            // address perms offset device inode path: the path is everything after the fifth field.
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].contains("x") else { continue }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            if path.hasPrefix("[") { continue }
            guard !checked.contains(path) else { continue }
            var info = stat()
            guard !path.hasSuffix(" (deleted)"), path.hasPrefix("/"), lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                return "it runs code from \(path), which is not a file in place"
            }
            if let reason = reasonToDistrust(file: path, info: info, checked: &checked) { return reason }
        }
        return nil
    }

    /// The file process `pid` runs, as the kernel holds it.
    static func runningFile(_ pid: Int32) -> stat? {
        let descriptor = open("/proc/\(pid)/exe", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return info
    }

    /// The `(device, inode)` of the file process `pid` runs.
    static func fileIdentity(of pid: Int32) -> FileIdentity? {
        runningFile(pid).map { FileIdentity(device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) }
    }

    /// True while process `pid` is untraced and still runs `executable` (it has not executed
    /// another program since it was trusted): checked before each request.
    static func stillUntraced(_ pid: Int32, executable: FileIdentity) -> Bool {
        tracer(of: pid) == 0 && fileIdentity(of: pid) == executable
    }

    /// `TracerPid` of process `pid`; nil when its status cannot be read.
    static func tracer(of pid: Int32) -> Int32? {
        guard let status = procFile(pid, "status").map({ String(decoding: $0, as: UTF8.self) }),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") })
        else { return nil }
        return Int32(line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces))
    }

    /// The environment block process `pid` started with.
    private static func initialEnvironment(_ pid: Int32) -> [UInt8]? {
        guard let stat = procFile(pid, "stat").map({ String(decoding: $0, as: UTF8.self) }), let end = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name start at the third (state); env_start and env_end are
        // the 50th and 51st.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count >= 49, let start = UInt(fields[47]), let stop = UInt(fields[48]), stop >= start, stop - start <= 1 << 20 else { return nil }
        var block = [UInt8](repeating: 0, count: Int(stop - start))
        guard !block.isEmpty else { return block }
        let read = block.withUnsafeMutableBytes { kc_read_process_memory(pid, start, $0.baseAddress, $0.count) }
        guard read == block.count else { return nil }
        return block
    }

    /// The whole of `/proc/PID/NAME`, read to its end (its size shows as 0).
    private static func procFile(_ pid: Int32, _ name: String) -> [UInt8]? {
        let descriptor = open("/proc/\(pid)/\(name)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return contents }
            contents += buffer[0..<count]
        }
    }

    /// Nil when `file` (whose `info` was taken) and every directory above it belong to root
    /// and nobody else can write them; directories already passed are in `checked`.
    private static func reasonToDistrust(file: String, info: stat, checked: inout Set<String>) -> String? {
        guard info.st_uid == 0, info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            return "\(file) could be changed by someone other than root (owner uid \(info.st_uid), mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        checked.insert(file)
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        while !checked.contains(directory) {
            var parent = stat()
            guard lstat(directory, &parent) == 0, parent.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory in place" }
            let othersWrite = parent.st_mode & (S_IWGRP | S_IWOTH) != 0
            guard parent.st_uid == 0, !othersWrite || parent.st_mode & S_ISVTX != 0 else {
                return "\(directory), above \(file), could be changed by someone other than root (owner uid \(parent.st_uid), mode \(String(parent.st_mode & 0o7777, radix: 8)))"
            }
            checked.insert(directory)
            guard directory != "/" else { break }
            directory = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        }
        return nil
    }
}
