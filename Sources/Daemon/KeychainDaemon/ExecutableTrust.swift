import CKeychainSupport
import Foundation
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

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
/// - its environment as the dynamic loader saw it (``ProcessFiles/environmentBlock(_:)``) sets
///   none of `LD_PRELOAD`, `LD_AUDIT` and `LD_LIBRARY_PATH`;
/// - every executable mapping (`/proc/PID/maps`: the libraries it loaded) comes from a file that
///   passes the same ownership checks, and is that very file (device and inode): a library
///   mounted over a root-owned path in a mount namespace of the caller's own (`unshare -Urm`)
///   is another file than the one the daemon checked at that path. Anonymous executable memory
///   is not trusted;
/// - a native process runs in the daemon's user namespace (in one of its own it is root there).
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

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }

        /// A mapping's file as `/proc/PID/maps` shows it: `MAJOR:MINOR` in hex, and the inode.
        init?(device: Substring, inode: Substring) {
            let parts = device.split(separator: ":")
            guard parts.count == 2, let major = UInt64(parts[0], radix: 16), let minor = UInt64(parts[1], radix: 16),
                let number = UInt64(inode)
            else { return nil }
            // glibc's makedev.
            self.device = (major & 0xfff) << 8 | (major & ~0xfff) << 32 | (minor & 0xff) | (minor & ~0xff) << 12
            self.inode = number
        }
    }

    /// Executable mappings the kernel makes in every process.
    private static let kernelMappings: Set<Substring> = ["[vdso]", "[vsyscall]", "[uprobes]"]

    /// What the checks found: the file a trusted process runs, or why it is not trusted.
    enum Verdict {
        case trusted(FileIdentity)
        case untrusted(String)
    }

    /// Whether process `pid`, running `executable`, is trusted. `root` is where the paths the
    /// process sees are found from the daemon: empty for a process of the host's file system,
    /// `/proc/self/fd/N` of its root directory (``ProcessFiles/GuardedEntry/root``) for one in a
    /// sandbox's mount namespace (its files are then checked as it sees them, and the walk up its
    /// directories stops at its root).
    static func verdict(pid: Int32, executable: String, root: String = "") -> Verdict {
        guard !executable.hasSuffix(" (deleted)") else {
            return .untrusted("its executable was deleted or replaced after it started")
        }
        guard let running = runningFile(pid) else { return .untrusted("its executable cannot be inspected") }
        var named = stat()
        guard stat(root + executable, &named) == 0, named.st_dev == running.st_dev, named.st_ino == running.st_ino
        else {
            return .untrusted("\(executable) names another file than the one it runs")
        }
        var checked: Set<String> = root.isEmpty ? [] : [root]
        if let reason = reasonToDistrust(file: root + executable, root: root, info: running, checked: &checked) {
            return .untrusted(reason)
        }
        if let tracer = tracer(of: pid), tracer != 0 { return .untrusted("it is being traced (by pid \(tracer))") }
        guard let variable = loaderVariable(pid) else { return .untrusted("its environment cannot be read") }
        if let variable = variable {
            return .untrusted("its environment sets \(variable), which loads code of the caller's choice")
        }
        guard let maps = ProcessFiles.read(pid, .memoryMap).map({ String(decoding: $0, as: UTF8.self) }) else {
            return .untrusted("its memory map cannot be read")
        }
        // The files approved, by the path the process names them with: each mapping must be the
        // very file the daemon approved (device and inode, from the map), not one mounted over
        // that path in a mount namespace of the process's own.
        var approved: [Substring: FileIdentity] = [Substring(executable): FileIdentity(running)]
        for line in maps.split(separator: "\n") {
            // address perms offset device inode path: the path is everything after the fifth field.
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].contains("x") else { continue }
            guard fields.count == 6 else { return .untrusted("it runs code from anonymous executable memory") }
            let path = fields[5].drop { $0 == " " }
            if Self.kernelMappings.contains(path) { continue }
            guard let mapped = FileIdentity(device: fields[3], inode: fields[4]) else {
                return .untrusted("its memory map cannot be read")
            }
            if approved[path] == nil {
                var info = stat()
                guard !path.hasSuffix(" (deleted)"), path.hasPrefix("/"), lstat(root + path, &info) == 0,
                    info.st_mode & S_IFMT == S_IFREG
                else {
                    return .untrusted("it runs code from \(path), which is not a file in place")
                }
                if let reason = reasonToDistrust(file: root + path, root: root, info: info, checked: &checked) {
                    return .untrusted(reason)
                }
                approved[path] = FileIdentity(info)
            }
            guard approved[path] == mapped else {
                return .untrusted("it runs code from another file than \(path) (a file mounted over it where it runs?)")
            }
        }
        // In a user namespace of its own, the process is root there and can mount whatever it
        // likes over what the daemon checks; a sandbox's (checked through its root) is judged by
        // its sandbox.
        if root.isEmpty, userNamespace(of: pid).map({ $0 != ownUserNamespace }) ?? true {
            return .untrusted("it runs in a user namespace of its own")
        }
        return .trusted(FileIdentity(running))
    }

    /// The daemon's own user namespace, which never changes.
    private static let ownUserNamespace = ProcessFiles.linkTarget(atPath: "/proc/self/ns/user")

    /// The identity of process `pid`'s user namespace (`user:[4026531837]`); nil when it cannot
    /// be read.
    private static func userNamespace(of pid: Int32) -> String? {
        guard let descriptor = ProcessFiles.open(pid, .userNamespace) else { return nil }
        defer { close(descriptor) }
        return ProcessFiles.linkTarget(ofDescriptor: descriptor)
    }

    /// The file process `pid` runs, as the kernel holds it.
    static func runningFile(_ pid: Int32) -> stat? {
        guard let descriptor = ProcessFiles.open(pid, .executable) else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return info
    }

    /// True while process `pid` is untraced and still runs `executable` (it has not executed
    /// another program since it was trusted): checked before each request.
    static func stillUntraced(_ pid: Int32, executable: FileIdentity) -> Bool {
        tracer(of: pid) == 0 && runningFile(pid).map(FileIdentity.init) == executable
    }

    /// Nil when the host's file `path` is `file` (the very inode a process runs) and it and every
    /// directory above it belong to root and nobody else can write them; else why not.
    static func reasonNotInstalled(_ path: String, is file: FileIdentity) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, FileIdentity(info) == file else { return "it does not run \(path)" }
        var checked = Set<String>()
        return reasonToDistrust(file: path, root: "", info: info, checked: &checked)
    }

    /// `TracerPid` of process `pid`; nil when its status cannot be read.
    static func tracer(of pid: Int32) -> Int32? {
        guard let status = ProcessFiles.read(pid, "status").map({ String(decoding: $0, as: UTF8.self) }),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") })
        else { return nil }
        return Int32(line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces))
    }

    /// The first of ``loaderVariables`` set (not empty) in the environment process `pid`
    /// started with: `.some(nil)` when none is, nil when it cannot be read. The block may hold
    /// the caller's secrets (tokens in variables): it is scanned as bytes, never made into
    /// strings, and wiped.
    private static func loaderVariable(_ pid: Int32) -> String?? {
        guard var block = ProcessFiles.environmentBlock(pid) else { return nil }
        defer { ProcessFiles.wipe(&block) }
        for entry in block.split(separator: 0) {
            for variable in loaderVariables {
                let prefix = Array((variable + "=").utf8)
                if entry.count > prefix.count && entry.starts(with: prefix) { return .some(variable) }
            }
        }
        return .some(nil)
    }

    /// Nil when `file` (whose `info` was taken) and every directory above it belong to root
    /// and nobody else can write them; directories already passed are in `checked`. A reason
    /// names paths as the process sees them (without `root`).
    private static func reasonToDistrust(file: String, root: String, info: stat, checked: inout Set<String>) -> String?
    {
        func shown(_ path: String) -> String {
            let inside = path.dropFirst(root.count)
            return inside.isEmpty ? "/" : String(inside)
        }
        guard info.st_uid == 0, info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            return
                "\(shown(file)) could be changed by someone other than root (owner uid \(info.st_uid), mode "
                + "\(String(info.st_mode & 0o7777, radix: 8)))"
        }
        checked.insert(file)
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        while !checked.contains(directory) {
            var parent = stat()
            guard lstat(directory, &parent) == 0, parent.st_mode & S_IFMT == S_IFDIR else {
                return "\(shown(directory)) is not a directory in place"
            }
            let othersWrite = parent.st_mode & (S_IWGRP | S_IWOTH) != 0
            guard parent.st_uid == 0, !othersWrite || parent.st_mode & S_ISVTX != 0 else {
                return
                    "\(shown(directory)), above \(shown(file)), could be changed by someone other than root (owner uid "
                    + "\(parent.st_uid), mode \(String(parent.st_mode & 0o7777, radix: 8)))"
            }
            checked.insert(directory)
            guard directory != "/" else { break }
            directory = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        }
        return nil
    }
}
