import CKeychainSupport
import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The keychain directory, trusted only after checking that nobody but its owner can change it,
/// and then used through its descriptor alone.
///
/// Opening walks the path from `/` one component at a time with `O_NOFOLLOW`, checking each
/// directory with `fstat` on the descriptor it opened (never by path twice): every parent must
/// belong to root or the current user and be writable by nobody else, unless it is sticky (as
/// `/tmp` is, where only an entry's owner can rename it); the keychain directory itself must
/// belong to the current user and is made mode 0700 (so no other user can read what is inside).
/// Every file inside is opened beneath the directory's descriptor without following any link
/// (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`; one component with `O_NOFOLLOW`
/// on a kernel before 5.6), and must be a regular file of the current user that no other user can write. A planted file, a
/// symbolic link, or a directory
/// another user could swap is refused with `errSecInvalidKeychain`; nothing is adopted.
///
/// Symbolic links in the parents (a home directory that is a link) are resolved once, before the
/// walk; the walk then refuses any link it meets, so swapping a parent for a link afterwards
/// fails rather than redirects.
public final class KeychainDirectory: Sendable {
    /// The directory's path, for messages and for SQLite (which opens by path; the directory's
    /// checks make that path safe from other users).
    public let url: URL
    private let descriptor: Int32
    private let uid = getuid()

    /// The longest a state file may be; anything larger was not written by the keychain.
    public static let maximumStateFileSize = 1 << 20

    /// Opens the keychain directory at `url`.
    ///
    /// - Parameters:
    ///   - creating: create the directory (and missing parents, mode 0755) when absent.
    ///   - permissions: the directory's mode, set when it differs: 0700 (the default) lets no
    ///     other user in; 0755 lets them reach a socket inside (the system daemon's
    ///     `/run/keychain`). Write permission for others is refused either way.
    /// - Throws: `errSecNoSuchKeychain` when it is absent and `creating` is false;
    ///   `errSecInvalidKeychain` when it or a parent could be changed by another user;
    ///   `errSecIO` when it cannot be opened.
    public init(_ url: URL, creating: Bool, permissions: mode_t = 0o700) throws(KeychainError) {
        self.url = url
        descriptor = try Self.openChain(url.path, creating: creating, permissions: permissions)
        try checkOwnDirectory(permissions)
    }

    deinit { close(descriptor) }

    // MARK: Opening the chain

    private static func openChain(_ path: String, creating: Bool, permissions: mode_t) throws(KeychainError) -> Int32 {
        let components = resolvedComponents(path)
        var current = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw ioError("cannot open /") }
        var walked = ""
        for (index, name) in components.enumerated() {
            try checkParent(current, walked.isEmpty ? "/" : walked)
            walked += "/" + name
            var next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT {
                guard creating else {
                    close(current)
                    throw KeychainError(.errSecNoSuchKeychain, "no keychain exists at \(path) yet")
                }
                if mkdirat(current, name, index == components.count - 1 ? permissions : 0o755) != 0 && errno != EEXIST {
                    let reason = lastError()
                    close(current)
                    throw KeychainError(.errSecIO, "cannot create \(walked): \(reason)")
                }
                next = openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let reason = lastError()
            let failure = errno
            close(current)
            guard next >= 0 else {
                if failure == ELOOP || failure == ENOTDIR {
                    throw KeychainError(
                        .errSecInvalidKeychain,
                        "\(walked) is a symbolic link or not a directory, so the keychain path could be "
                            + "redirected; refusing to use it"
                    )
                }
                throw KeychainError(.errSecIO, "cannot open \(walked): \(reason)")
            }
            current = next
        }
        return current
    }

    /// The path's components after resolving links in the part that exists now.
    private static func resolvedComponents(_ path: String) -> [String] {
        var existing = URL(fileURLWithPath: path).standardized
        var missing: [String] = []
        while existing.path != "/" {
            if let resolved = realpath(existing.path, nil) {
                defer { free(resolved) }
                existing = URL(fileURLWithPath: String(cString: resolved))
                break
            }
            missing.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        return existing.pathComponents.filter { $0 != "/" } + missing
    }

    /// A parent must belong to root or to us, and be writable by nobody else unless sticky.
    private static func checkParent(_ fd: Int32, _ path: String) throws(KeychainError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ioError("cannot inspect \(path)") }
        let uid = getuid()
        guard info.st_uid == 0 || info.st_uid == uid else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "\(path) belongs to another user (uid \(info.st_uid)), who could replace the keychain inside it; "
                    + "keep the keychain under directories only you or root own (set XDG_DATA_HOME)"
            )
        }
        let othersCanWrite = info.st_mode & (S_IWGRP | S_IWOTH) != 0
        guard !othersCanWrite || info.st_mode & S_ISVTX != 0 else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "\(path) can be written by other users (mode \(octal(info.st_mode))), who could replace the "
                    + "keychain inside it; remove their write permission (chmod go-w) or keep the keychain elsewhere "
                    + "(set XDG_DATA_HOME)"
            )
        }
    }

    /// The keychain directory: ours, writable by nobody else, and mode `permissions`.
    private func checkOwnDirectory(_ permissions: mode_t) throws(KeychainError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Self.ioError("cannot inspect \(url.path)") }
        guard info.st_uid == uid else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "the keychain directory \(url.path) belongs to another user (uid \(info.st_uid)); refusing to use a "
                    + "keychain someone else could have planted"
            )
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "the keychain directory \(url.path) can be written by other users (mode \(Self.octal(info.st_mode))), "
                    + "who could have planted its files; check them, then chmod 700 it"
            )
        }
        if info.st_mode & 0o777 != permissions && fchmod(descriptor, permissions) != 0 {
            throw Self.ioError("cannot set the keychain directory \(url.path)'s mode to \(Self.octal(permissions))")
        }
    }

    // MARK: Files

    /// Opens `name` inside the directory without following links; nil when it does not exist
    /// (and `flags` has no `O_CREAT`). The file must be a regular file of ours that nobody else
    /// can write.
    public func openFile(_ name: String, _ flags: Int32) throws(KeychainError) -> Int32? {
        let fd = kc_openat_beneath(descriptor, name, flags, 0o600)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP || errno == EXDEV {
                throw KeychainError(
                    .errSecInvalidKeychain,
                    "\(path(name)) is a symbolic link; the keychain never follows links in its directory")
            }
            throw Self.ioError("cannot open \(path(name))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else { close(fd); throw Self.ioError("cannot inspect \(path(name))") }
        do {
            try checkFileInfo(info, name)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    private func checkFileInfo(_ info: stat, _ name: String) throws(KeychainError) {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw KeychainError(.errSecInvalidKeychain, "\(path(name)) is not a regular file")
        }
        guard info.st_uid == uid else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "\(path(name)) belongs to another user (uid \(info.st_uid)); refusing a file the keychain did not write"
            )
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw KeychainError(
                .errSecInvalidKeychain,
                "\(path(name)) can be written by other users (mode \(Self.octal(info.st_mode))), so the keychain "
                    + "cannot trust it; if you made it so, check it and chmod 600 it"
            )
        }
    }

    /// Checks a file that another library opens by path (SQLite): when present it must be a
    /// regular file of ours that nobody else can write, not a link.
    public func checkFile(_ name: String) throws(KeychainError) {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return }
            throw Self.ioError("cannot inspect \(path(name))")
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw KeychainError(
                .errSecInvalidKeychain,
                "\(path(name)) is a symbolic link; the keychain never follows links in its directory")
        }
        try checkFileInfo(info, name)
    }

    /// The size of `name`, or nil when it does not exist.
    public func size(_ name: String) throws(KeychainError) -> Int? {
        try checkFile(name)
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Reads a whole state file, of at most `maximumSize` bytes, or nil when it does not exist.
    public func read(_ name: String, maximumSize: Int = maximumStateFileSize) throws(KeychainError) -> Data? {
        guard let fd = try openFile(name, O_RDONLY) else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Self.ioError("cannot read \(path(name))") }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= maximumSize else {
                throw KeychainError(
                    .errSecDecode, "\(path(name)) is larger than any file the keychain writes; it was replaced")
            }
        }
        return data
    }

    /// Writes `data` to `name` atomically with mode 0600: a new temporary file with a random
    /// name (`O_EXCL`, so a planted name is never written through), fsync, rename, and fsync of
    /// the directory. A crash leaves the old file or the new one, and at worst a temporary that
    /// the next open removes.
    public func writeAtomically(_ data: Data, to name: String) throws(KeychainError) {
        var random = SystemRandomNumberGenerator()
        let temporary = ".\(name).\(String(random.next(), radix: 16)).tmp"
        let fd = kc_openat_beneath(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw Self.ioError("cannot write \(path(name))") }
        var failure: String?
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { failure = lastError(); return }
                offset += written
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = lastError() }
        close(fd)
        if failure == nil && renameat(descriptor, temporary, descriptor, name) != 0 { failure = lastError() }
        guard failure == nil else {
            unlinkat(descriptor, temporary, 0)
            throw KeychainError(.errSecIO, "cannot write \(path(name)): \(failure ?? "")")
        }
        syncDirectory()
    }

    /// Writes `data` at `offset` of `name` in place, holding the file's `flock` so writers take
    /// turns: for a record of fixed-size slots where a torn write damages only the slot being
    /// written. With `durable`, flushes it (`fdatasync`) and the directory entry.
    public func writeInPlace(_ data: Data, at offset: Int, to name: String, durable: Bool) throws(KeychainError) {
        guard let fd = try openFile(name, O_WRONLY | O_CREAT) else { throw Self.ioError("cannot open \(path(name))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Self.ioError("cannot lock \(path(name))") }
        }
        let written = data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == data.count, !durable || fdatasync(fd) == 0 else {
            throw Self.ioError("cannot write \(path(name))")
        }
        if durable { syncDirectory() }
    }

    /// Removes `name` if it is there: true when this call removed it, false when it was not
    /// (another process took it first).
    public func take(_ name: String) -> Bool { unlinkat(descriptor, name, 0) == 0 }

    /// The names of the entries in the directory, read through its descriptor.
    public func names() -> [String] {
        let copy = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// True when `name` exists (as anything).
    public func exists(_ name: String) -> Bool {
        var info = stat()
        return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Removes `name`; a missing file is not an error.
    public func remove(_ name: String) throws(KeychainError) {
        guard unlinkat(descriptor, name, 0) == 0 || errno == ENOENT else {
            throw Self.ioError("cannot remove \(path(name))")
        }
    }

    /// Makes a rename or removal in the directory durable.
    public func syncDirectory() {
        fsync(descriptor)
    }

    /// Removes temporaries a crashed writer left (`.NAME.RANDOM.tmp`). Call under the
    /// directory's lock, so that no writer is still using them.
    public func removeLeftoverTemporaries() {
        let listing = dup(descriptor)
        guard listing >= 0, let stream = fdopendir(listing) else { return }
        defer { closedir(stream) }
        var leftovers: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("."), name.hasSuffix(".tmp"), name.count > 5 { leftovers.append(name) }
        }
        for name in leftovers { unlinkat(descriptor, name, 0) }
        if !leftovers.isEmpty { syncDirectory() }
    }

    /// Identifies the current version of `name` (inode, size, modification time).
    public func stamp(_ name: String) -> FileStamp? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return FileStamp(info)
    }

    // MARK: The inter-process lock

    /// Runs `body` holding an exclusive `flock` on `name`, so that processes sharing the keychain
    /// take turns (two processes guessing passcodes at once still count every attempt). Waits
    /// at most `timeout` seconds for another holder, then fails with a "keychain busy" error
    /// (errSecIO) instead of hanging.
    public func withExclusiveLock<Result>(
        _ name: String, timeout: Double, _ body: () throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        guard let fd = try openFile(name, O_RDWR | O_CREAT) else { throw Self.ioError("cannot open \(path(name))") }
        defer { close(fd) }
        let start = DispatchTime.now().uptimeNanoseconds
        var pause: UInt32 = 1_000
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw Self.ioError("cannot lock the keychain") }
            let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard waited < timeout else {
                throw KeychainError(
                    .errSecIO,
                    "keychain busy: another process has held \(path(name)) for more than \(Int(timeout)) seconds; "
                        + "try again, or find the process that holds it (fuser \(path(name)))"
                )
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    // MARK: Messages

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    private static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }

    private static func ioError(_ what: String) -> KeychainError {
        KeychainError(.errSecIO, "\(what): \(lastError())")
    }
}

private func lastError() -> String { String(cString: strerror(errno)) }

/// Identifies one version of a file (inode, size, modification time): state is reread only
/// when its file changed.
public struct FileStamp: Equatable, Sendable {
    public let inode: UInt64
    public let size: Int64
    public let modified: Int64
    public let modifiedNanoseconds: Int64

    init(_ info: stat) {
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    }
}
