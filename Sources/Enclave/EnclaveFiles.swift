#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainProtocol

/// File-system primitives for the Enclave's state: atomic replacement, owner-only modes and an
/// inter-process lock.
enum EnclaveFiles {
    /// Creates `directory` (and parents) with mode 0700 and checks that nobody else can read it.
    static func prepareDirectory(_ directory: URL) throws(KeychainError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeychainError(.errSecIO, "cannot create the keychain directory \(directory.path): \(error.localizedDescription)")
        }
        // Other users must not list or read the device secret (DESIGN.md, Data protection).
        _ = chmod(directory.path, 0o700)
    }

    /// Writes `data` to `url` atomically with mode 0600: a temporary file, fsync, rename, and
    /// fsync of the directory, so a crash leaves either the old file or the new one.
    static func writeAtomically(_ data: Data, to url: URL) throws(KeychainError) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeychainError(.errSecIO, "cannot write \(url.lastPathComponent): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0 else {
            unlink(temporary.path)
            throw KeychainError(.errSecIO, "cannot write \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary.path, url.path) == 0 else {
            unlink(temporary.path)
            throw KeychainError(.errSecIO, "cannot replace \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Reads a whole file, or nil when it does not exist.
    static func read(_ url: URL) throws(KeychainError) -> Data? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw KeychainError(.errSecIO, "cannot read \(url.lastPathComponent): \(error.localizedDescription)")
        }
    }

    /// Runs `body` while holding an exclusive `flock` on `url`, so that processes sharing the
    /// keychain take turns: two processes guessing passcodes at once still count every attempt.
    static func withExclusiveLock<Result>(
        _ url: URL, _ body: () throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeychainError(.errSecIO, "cannot open the keychain lock file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw KeychainError(.errSecIO, "cannot lock the keychain: \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
