import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Encrypted backups as iOS makes them (Docs/Backup.md): the keychain writes the file's bytes
/// (this process never sees an item's secret), this process writes them to disk. Both need an
/// owner session in keychaind (`keychainctl owner login`) and an unlocked keychain.
///
/// ```swift
/// let summary = try KeychainDevice.backup(
///     to: URL(fileURLWithPath: "keychain.backup"), password: SecretBytes(utf8: "a long backup password"))
/// let report = try KeychainDevice.restore(
///     from: URL(fileURLWithPath: "keychain.backup"), password: SecretBytes(utf8: "a long backup password"))
/// ```
extension KeychainDevice {
    /// Writes an encrypted backup of the keychain to `file`, which it replaces only once the
    /// new file is whole (mode 0600). Items that may migrate go in under `password`'s key;
    /// `…ThisDeviceOnly` items and items with an access control go in sealed to this device;
    /// WhenPasscodeSetThisDeviceOnly items, Enclave keys and items under an app's password stay
    /// out.
    ///
    /// - Parameter progress: called after each part, with the share of items written.
    /// - Throws: `errSecMissingEntitlement` outside an owner session; `errSecInteractionNotAllowed`
    ///   while the keychain is locked; `errSecIO` when the file cannot be written.
    public static func backup(
        to file: URL, password: SecretBytes, progress: (BackupProgress) -> Void = { _ in }
    ) throws(KeychainError) -> BackupSummary {
        var part = try backupPart(.beginBackup(password: password))
        let output = try BackupFileOutput(file)
        do throws(KeychainError) {
            try output.write(part.bytes)
            while part.summary == nil {
                progress(BackupProgress(items: part.done, fraction: Double(part.done) / Double(max(part.total, 1))))
                part = try backupPart(.continueBackup)
                try output.write(part.bytes)
            }
            try output.commit()
        } catch {
            output.abandon()
            throw error
        }
        progress(BackupProgress(items: part.done, fraction: 1))
        guard let summary = part.summary else { throw KeychainError.errSecInternalComponent }
        return summary
    }

    private static func backupPart(_ request: KeychainRequest) throws(KeychainError) -> BackupPart {
        guard case .backupPart(let part) = try ProcessKeychain.perform(request) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a backup request with something else")
        }
        return part
    }

    /// Puts the items of the backup `file` into the keychain, sealed under its keys, with their
    /// attributes, access groups and dates. An item the keychain holds already (same primary
    /// key) is replaced when the backup's copy is newer, or when `replacing` is true; otherwise
    /// kept. Device-only items come back only on the device that made the backup.
    ///
    /// Nothing is changed unless the whole file is authentic and every item in it valid.
    ///
    /// - Parameter progress: called after each part of the file, with the share of its bytes
    ///   read.
    /// - Throws: `errSecAuthFailed` for a wrong password; `errSecDecode` for a file that is not
    ///   a backup, was altered, cut short or lengthened; `errSecMissingEntitlement` outside an
    ///   owner session; `errSecInteractionNotAllowed` while the keychain is locked.
    public static func restore(
        from file: URL, password: SecretBytes, replacing: Bool = false, progress: (BackupProgress) -> Void = { _ in }
    ) throws(KeychainError) -> RestoreReport {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw KeychainError(.errSecIO, "cannot open \(file.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        let size = fstat(descriptor, &info) == 0 ? max(Int(info.st_size), 1) : 1
        _ = try ProcessKeychain.perform(.beginRestore(password: password, replacing: replacing))
        var buffer = [UInt8](repeating: 0, count: KeychainRequest.maximumRestoreChunk)
        defer { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
        var offset = 0
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw KeychainError(.errSecIO, "cannot read \(file.path): \(String(cString: strerror(errno)))")
            }
            guard count > 0 else { break }
            offset += count
            guard case .count(let items) = try ProcessKeychain.perform(.restoreChunk(SecretBytes(buffer[0..<count])))
            else {
                throw KeychainError(.errSecInternalComponent, "the keychain answered a restore with something else")
            }
            progress(BackupProgress(items: items, fraction: min(Double(offset) / Double(size), 1)))
        }
        guard case .restored(let report) = try ProcessKeychain.perform(.finishRestore) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a restore with something else")
        }
        return report
    }
}
