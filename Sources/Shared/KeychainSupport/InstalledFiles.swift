import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Writing the files an installation puts in place (programs, units, registrations, activation
/// files): each through a temporary file and a rename, or written whole, with its directory
/// created. Used by `keychainctl daemon install` and `keychain-secret-service install`.
public enum InstalledFiles {
    /// Copies `source` to `destination` (root's, `mode`) through a temporary file and a rename.
    public static func copy(from source: String, to destination: String, mode: mode_t) throws(KeychainError) {
        try makeDirectory(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
        let temporary = destination + ".new"
        do {
            try? FileManager.default.removeItem(atPath: temporary)
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
        } catch {
            throw KeychainError(.errSecIO, "cannot copy \(source) to \(destination): \(error.localizedDescription)")
        }
        guard chown(temporary, 0, 0) == 0, chmod(temporary, mode) == 0, rename(temporary, destination) == 0 else {
            throw KeychainError(.errSecIO, "cannot install \(destination): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `text` to `path` (0644, its writer's: root's when root installs), creating its
    /// directory.
    public static func write(_ text: String, at path: String) throws(KeychainError) {
        try makeDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw KeychainError(.errSecIO, "cannot write \(path): \(error.localizedDescription)")
        }
        guard chmod(path, 0o644) == 0 else {
            throw KeychainError(.errSecIO, "cannot make \(path) readable: \(String(cString: strerror(errno)))")
        }
    }

    /// Creates directory `path` and those above it that are missing.
    public static func makeDirectory(_ path: String) throws(KeychainError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw KeychainError(.errSecIO, "cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// This program's own path (`/proc/self/exe`), which an installation copies or names. Once a
    /// package upgrade has replaced the file, the kernel names it `PATH (deleted)`: the path is
    /// still the program's, now the new version's.
    public static var runningProgram: String {
        let running =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return running.hasSuffix(" (deleted)") ? String(running.dropLast(" (deleted)".count)) : running
    }
}
