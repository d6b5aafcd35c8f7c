#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import Keychain
import KeychainSupport

/// `keychainctl daemon migrate-to-system`: moves the user's per-user keychain (its device
/// secret, keybag, database and counters, as they are) into the system daemon, then removes
/// the old files.
///
/// Crash safety: the per-user files are only read until the system daemon answers that the
/// keychain is in place (it stages what it receives and puts it in place with one rename,
/// ``KeychainImport`` in the daemon); only then are they renamed aside in one step and removed.
/// Killed before that answer, the user keeps the per-user keychain and has no system one (run
/// the command again); killed after it, both hold the items, and a run again says so.
struct DaemonMigrateToSystem: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-to-system",
        abstract: "Move your per-user keychain into the system keychaind, then remove its files.",
        discussion:
            "Its passcode, when it has one, is read from standard input or a hidden prompt. Stop the per-user "
                + "keychaind first (systemctl --user stop keychaind.socket keychaind.service, or keychainctl daemon "
                + "stop); the system keychaind must be running and must hold no keychain of yours yet."
    )

    func run() throws {
        try KeychainCommand.run(handlesSecrets: false) {
            guard let socket = KeychainCommand.systemDaemonSocket else {
                throw KeychainError(
                    .errSecNotAvailable,
                    "no system keychaind is installed: install it first (as root: keychainctl daemon install --system)")
            }
            let directory = KeychainPaths.keychainDirectory()
            let aside = directory.deletingLastPathComponent().appendingPathComponent(
                directory.lastPathComponent + ".migrated")
            // A run killed while removing the old files left them aside: they are in the
            // system keychain already.
            if FileManager.default.fileExists(atPath: aside.path) { try FileManager.default.removeItem(at: aside) }
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("keybag").path) else {
                throw KeychainError(
                    .errSecItemNotFound, "there is no per-user keychain at \(directory.path): nothing to move")
            }
            // No per-user daemon may change the files while they are read, nor start meanwhile.
            let runtime = KeychainPaths.runtimeDirectory()
            let daemonLock =
                FileManager.default.fileExists(atPath: runtime.path)
                ? try Self.lock(
                    runtime.appendingPathComponent(KeychainPaths.daemonLockName).path,
                    busy:
                        "a per-user keychaind is running: stop it first (systemctl --user stop keychaind.socket "
                            + "keychaind.service, or keychainctl daemon stop)"
                ) : nil
            defer { daemonLock.map { _ = close($0) } }
            let enclaveLock = try Self.lock(
                directory.appendingPathComponent(KeychainPaths.enclaveLockName).path,
                busy: "another program is changing the per-user keychain; try again")
            defer { close(enclaveLock) }

            let transport = DaemonTransport(systemSocket: socket)
            try transport.identifyThisProcess()
            ProcessHardening.apply()
            _ = try transport.perform(.beginImport)
            for name in KeychainRequest.importedFileNames {
                try Self.send(directory.appendingPathComponent(name), as: name, through: transport)
            }
            let count: Int
            do {
                count = try Self.finish(transport, passcode: nil)
            } catch let error as KeychainError where error.status == KeychainError.errSecAuthFailed.status {
                count = try Self.finish(transport, passcode: try SecretInput.line(prompt: "Passcode: "))
            }
            // In place in the system daemon: the old files go, aside first in one step.
            try FileManager.default.moveItem(at: directory, to: aside)
            try FileManager.default.removeItem(at: aside)
            print("moved \(count) item\(count == 1 ? "" : "s") into the system keychain; removed \(directory.path)")
        }
    }

    private static func finish(_ transport: DaemonTransport, passcode: SecretBytes?) throws -> Int {
        guard case .count(let count) = try transport.perform(.finishImport(passcode: passcode)) else {
            throw KeychainError(
                .errSecInternalComponent, "the daemon answered the move with something else than a count")
        }
        return count
    }

    /// Sends `file` in parts, when it exists; each part is wiped once sent.
    private static func send(_ file: URL, as name: String, through transport: DaemonTransport) throws {
        let descriptor = open(file.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw KeychainError(.errSecIO, "cannot read \(file.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: KeychainRequest.maximumImportChunk)
        defer { Self.wipe(&buffer) }
        var offset = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 0 else {
                throw KeychainError(.errSecIO, "cannot read \(file.path): \(String(cString: strerror(errno)))")
            }
            if count == 0 && offset > 0 { return }
            _ = try transport.perform(.importChunk(file: name, offset: offset, bytes: SecretBytes(buffer[0..<count])))
            offset += count
            if count == 0 { return }
        }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } }
    }

    /// Takes `flock` on `path` without waiting; the descriptor holds it.
    private static func lock(_ path: String, busy: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KeychainError(.errSecIO, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw KeychainError(.errSecIO, busy)
        }
        return descriptor
    }
}
