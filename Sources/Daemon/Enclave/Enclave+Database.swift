import Foundation
import KeychainProtocol
import StorageContracts

/// The keybag and the database belong together: the Enclave records, authenticated, which
/// keychain identity the database carries and the last generation committed to it, and admits
/// a database only when it matches. A mismatch is refused with `errSecDecode` and nothing is
/// changed; rows are deleted wholesale only to finish an erase the keybag itself records.
extension Enclave {
    /// Checks the database's files as the Enclave's own (``checkDatabaseFiles()``), then the
    /// database against the Enclave's records, under the enclave lock, and has the store carry
    /// out the one change an admission may need.
    ///
    /// - Parameters:
    ///   - inspect: reads the database without changing it; nil when it is absent or empty.
    ///   - stamp: stamps the database with a keychain identity (creating it if needed),
    ///     deleting every row first when asked (to finish an erase), and returns the database's
    ///     generation after that commit.
    /// - Throws: `errSecInvalidKeychain` for a database file another user could have planted or
    ///   redirected; `errSecDecode`, with what is wrong and how to recover, when the database and
    ///   the keybag do not belong together, the database is missing or empty although the
    ///   keybag records that it was created, or it lost committed transactions.
    public func bindDatabase(
        inspect: () throws(KeychainError) -> DatabaseIdentity?,
        stamp: (_ keychainID: String, _ deletingRows: Bool) throws(KeychainError) -> UInt64
    ) throws(KeychainError) {
        try checkDatabaseFiles()
        try withStateLock { () throws(KeychainError) in
            var keybag = try keybag()
            // The record first: commits precede their records and the database's generation
            // only grows, so a commit landing between these two reads cannot look like a loss.
            let record = Result { () throws(KeychainError) in
                try DatabaseRecord.load(files, authenticator: databaseRecordAuthenticator)
            }
            let found = try inspect()
            let database = files.path(Self.databaseFileName)
            let recovery =
                "Nothing was changed. Restore the keychain's files as they were together, or erase the keychain "
                + "with `keychainctl erase`."
            if let erased = keybag.erasedKeychainID, let found, found.keychainID == erased || found.keychainID == nil {
                // An erase destroyed the keys; its rows go now.
                let generation = try stamp(keybag.keychainID, true)
                try DatabaseRecord(keychainID: keybag.keychainID, generation: generation).save(
                    files, authenticator: databaseRecordAuthenticator, replacing: true)
                try rollbackCounter?.check(databaseGeneration: generation, database: database)
                keybag.erasedKeychainID = nil
                keybag.databaseCreated = true
                keybag.rowLedger = true
                try save(keybag)
                return
            }
            guard keybag.databaseCreated else {
                if let id = found?.keychainID, id != keybag.keychainID {
                    throw KeychainError(
                        .errSecDecode,
                        "\(database) belongs to another keychain (identity \(id)), not to the keybag beside it "
                            + "(\(keybag.keychainID)). \(recovery)"
                    )
                }
                let generation = try stamp(keybag.keychainID, false)
                try DatabaseRecord(keychainID: keybag.keychainID, generation: generation).save(
                    files, authenticator: databaseRecordAuthenticator, replacing: true)
                try rollbackCounter?.start(databaseGeneration: generation)
                keybag.databaseCreated = true
                keybag.rowLedger = true
                try save(keybag)
                return
            }
            guard let found else {
                throw KeychainError(
                    .errSecDecode,
                    "\(database) is missing or empty, but the keybag records that it holds this keychain's items. "
                        + "\(recovery)"
                )
            }
            guard let id = found.keychainID else {
                throw KeychainError(
                    .errSecDecode,
                    "\(database) lost committed changes: it holds no keychain tables although the keybag records "
                        + "that it holds this keychain's items (its write-ahead log \(database)-wal was removed or "
                        + "truncated, or an older copy was put back). Restore the database with its -wal file. "
                        + "\(recovery)"
                )
            }
            guard id == keybag.keychainID else {
                throw KeychainError(
                    .errSecDecode,
                    "\(database) belongs to another keychain (identity \(id)), not to the keybag beside it "
                        + "(\(keybag.keychainID)). \(recovery)"
                )
            }
            guard let record = try record.get(), record.keychainID == keybag.keychainID else {
                throw KeychainError(
                    .errSecDecode,
                    "\(files.path(DatabaseRecord.fileName)) is missing or belongs to another keychain, so the "
                        + "database's completeness cannot be checked. \(recovery)"
                )
            }
            guard found.generation >= record.generation else {
                throw KeychainError(
                    .errSecDecode,
                    "\(database) lost committed changes: it is at generation \(found.generation) but "
                        + "\(record.generation) were committed (its write-ahead log \(database)-wal was removed or "
                        + "truncated, or an older copy was put back). Restore the database with its -wal file. "
                        + "\(recovery)"
                )
            }
            // The TPM's counter catches what the record cannot: all of the files older together.
            try rollbackCounter?.check(databaseGeneration: found.generation, database: database)
        }
    }

    /// Records that the database committed `generation`. Called after every commit; never
    /// lowers the record. A record that fails to be written lags behind, which only weakens the
    /// detection of a later loss: the committed write itself stands.
    public func recordDatabaseCommit(generation: UInt64) {
        guard let keychainID = try? keychainID() else { return }
        try? DatabaseRecord(keychainID: keychainID, generation: generation).save(
            files, authenticator: databaseRecordAuthenticator)
        rollbackCounter?.record(generation)
    }

    /// How the device secret is kept: the TPM that seals it, its counter's NV index and value
    /// now; nothing when the secret is a file.
    public func deviceSecretProtection() -> KeychainProtection {
        guard let rollbackCounter else {
            return KeychainProtection(sealedBy: nil, counterIndex: nil, counterValue: nil)
        }
        return KeychainProtection(
            sealedBy: rollbackCounter.tpm.tcti, counterIndex: rollbackCounter.index,
            counterValue: try? rollbackCounter.value())
    }
}
