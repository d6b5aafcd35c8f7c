import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A backup file being written: a new file of mode 0600 beside the destination, which takes
/// the destination's name (by `rename`, after `fsync`) only once it is whole. Until then the
/// destination is untouched; a failure removes the new file.
struct BackupFileOutput {
    private let destination: URL
    private let temporary: URL
    private let descriptor: Int32

    init(_ destination: URL) throws(KeychainError) {
        self.destination = destination
        temporary = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(destination.lastPathComponent).\(getpid()).partial")
        descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("create", temporary) }
    }

    /// Appends `bytes`.
    func write(_ bytes: Data) throws(KeychainError) {
        let failed = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return true }
                offset += written
            }
            return false
        }
        if failed {
            let error = Self.failure("write", temporary)
            abandon()
            throw error
        }
    }

    /// Makes the file whole on disk and gives it the destination's name.
    func commit() throws(KeychainError) {
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            let error = Self.failure("write", temporary)
            unlink(temporary.path)
            throw error
        }
        guard rename(temporary.path, destination.path) == 0 else {
            let error = Self.failure("name", destination)
            unlink(temporary.path)
            throw error
        }
        let directory = open(destination.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Removes the new file.
    func abandon() {
        close(descriptor)
        unlink(temporary.path)
    }

    private static func failure(_ verb: String, _ url: URL) -> KeychainError {
        KeychainError(.errSecIO, "cannot \(verb) the backup file \(url.path): \(String(cString: strerror(errno)))")
    }
}
