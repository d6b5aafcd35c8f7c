import Crypto
import Enclave
import Foundation
import KeychainProtocol
import KeychainStore

/// Encrypted backups and restores (Docs/Backup.md), by the owner, of an unlocked keychain.
extension KeychainServer {
    /// The most rows written in one ``continueBackup(caller:)``.
    static let backupBatch = 1_000
    /// The bytes after which a part ends, whatever its rows.
    static let backupPartBytes = 1 << 20
    /// The most items one restore takes.
    static let maximumRestoredItems = 1_000_000

    /// Begins a backup: every row as it is now, and a writer under `password`. Returns the
    /// file's header.
    ///
    /// - Throws: `errSecMissingEntitlement` for a caller that is not the owner;
    ///   `errSecParam` for an empty password; `errSecInteractionNotAllowed` while locked.
    func beginBackup(password: SecretBytes, caller: CallerIdentity) throws(KeychainError) -> BackupPart {
        try requireOwner(caller)
        guard password.count > 0 else { throw KeychainError(.errSecParam, "a backup needs a password") }
        try requireUnlocked("a backup reads every item")
        let rows = try store.read { transaction in
            var rows: [StoredRow] = []
            for itemClass in ItemClass.allCases where itemClass.isImplemented {
                rows += try transaction.rows(
                    RowFilter(itemClass: itemClass.rawValue, accessGroupHashes: nil, synchronizable: nil))
            }
            return rows
        }
        let writer = try enclave.makeBackupWriter(password: password)
        transfers.put(BackupTransfers.Backup(writer: writer, rows: rows), caller.connection)
        return BackupPart(bytes: writer.header, done: 0, total: rows.count)
    }

    /// The backup's next part: up to ``backupBatch`` more rows, sealed, ending once it holds
    /// ``backupPartBytes``; the last part ends the file and carries the summary.
    func continueBackup(caller: CallerIdentity) throws(KeychainError) -> BackupPart {
        try requireOwner(caller)
        guard var backup = transfers.takeBackup(caller.connection) else {
            throw KeychainError(.errSecParam, "no backup was begun on this connection")
        }
        var bytes = Data()
        let last = min(backup.next + Self.backupBatch, backup.rows.count)
        var end = backup.next
        try enclave.inItemRequest { () throws(KeychainError) in
            // At most a batch of rows, and about a megabyte: a part stays far below a reply's limit.
            while end < last && bytes.count < Self.backupPartBytes {
                if let record = try backupRecord(backup.rows[end], &backup.summary) {
                    bytes.append(try backup.writer.append(record))
                }
                end += 1
            }
        }
        backup.next = end
        guard end < backup.rows.count else {
            bytes.append(try backup.writer.finish())
            return BackupPart(bytes: bytes, done: end, total: end, summary: backup.summary)
        }
        transfers.put(backup, caller.connection)
        return BackupPart(bytes: bytes, done: end, total: backup.rows.count)
    }

    /// A row's record by Apple's rules; nil for what never leaves: WhenPasscodeSetThisDeviceOnly
    /// items, token items (Enclave keys: their private key is sealed to this keychain's class
    /// key and could not open anywhere else), and items under an app's password (whose item
    /// key the keychain cannot seal again without it).
    private func backupRecord(_ row: StoredRow, _ summary: inout BackupSummary) throws(KeychainError) -> BackupRecord? {
        let item = try open(row)
        let accessControl = item.binding.accessControl
        guard item.binding.accessibility.protectionClass != .whenPasscodeSet, item.record.attributes["tkid"] == nil,
            accessControl?.control.flags.contains(.applicationPassword) != true
        else {
            summary.leftOut += 1
            return nil
        }
        let sealed = SealedItem(metadata: row.metadata, wrappedKey: row.wrappedKey, secret: row.secret)
        if item.binding.accessibility.isThisDeviceOnly || accessControl != nil {
            summary.thisDeviceOnly += 1
            return try enclave.sealForThisDevice(sealed, binding: item.binding, attributes: item.record.encoded())
        }
        summary.migratable += 1
        return .item(
            BackupItem(
                itemClass: row.itemClass, attributes: item.record.encoded(),
                secret: try enclave.openSecret(sealed, binding: item.binding), accessControl: nil))
    }

    /// Begins a restore under `password`.
    func beginRestore(password: SecretBytes, replacing: Bool, caller: CallerIdentity) throws(KeychainError) {
        try requireOwner(caller)
        try requireUnlocked("a restore seals every item under the keychain's keys")
        try transfers.begin(
            BackupTransfers.Restore(reader: enclave.makeBackupReader(password: password), replacing: replacing),
            caller.connection)
    }

    /// Reads the file's next bytes; returns how many items were read so far.
    func restoreChunk(_ bytes: SecretBytes, caller: CallerIdentity) throws(KeychainError) -> Int {
        try requireOwner(caller)
        guard var restore = transfers.takeRestore(caller.connection) else {
            throw KeychainError(.errSecParam, "no restore was begun on this connection")
        }
        do throws(KeychainError) {
            restore.records += try restore.reader.read(bytes)
            guard restore.records.count <= Self.maximumRestoredItems else {
                throw KeychainError(
                    .errSecDataTooLarge,
                    "the backup holds more than \(Self.maximumRestoredItems) items; nothing was restored")
            }
        } catch {
            transfers.endRestore(caller.connection)
            throw error
        }
        transfers.put(restore, caller.connection)
        return restore.records.count
    }

    /// Checks that the file is whole, checks every item, and puts them in the keychain in one
    /// transaction: nothing is changed unless everything is.
    func finishRestore(caller: CallerIdentity) throws(KeychainError) -> RestoreReport {
        try requireOwner(caller)
        guard let restore = transfers.takeRestore(caller.connection) else {
            throw KeychainError(.errSecParam, "no restore was begun on this connection")
        }
        defer { transfers.endRestore(caller.connection) }
        _ = try restore.reader.finish()
        var report = RestoreReport(added: 0, replaced: 0, kept: 0, fromAnotherDevice: 0)
        var items: [RestoredItem] = []
        for record in restore.records {
            switch record {
            case .item(let item):
                items.append(try RestoredItem(item, sealedToDevice: false))
            case .sealedToDevice(let sealed):
                guard let item = enclave.openSealedForThisDevice(sealed) else {
                    report.fromAnotherDevice += 1
                    continue
                }
                items.append(try RestoredItem(item, sealedToDevice: true))
            case .end:
                continue
            }
        }
        return try enclave.inItemRequest { () throws(KeychainError) in
            try put(items, replacing: restore.replacing, into: report)
        }
    }

    /// Seals each item as a new row, then, in one transaction, adds it, or replaces or keeps
    /// the row of the same primary key.
    private func put(
        _ items: [RestoredItem], replacing: Bool, into report: RestoreReport
    ) throws(KeychainError) -> RestoreReport {
        var sealed: [(item: RestoredItem, row: StoredRow, hashes: [Data])] = []
        sealed.reserveCapacity(items.count)
        for item in items {
            let identity = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
            let new = try seal(
                item.record, secret: item.secret, itemClass: item.itemClass, identity: identity, version: 1,
                accessControl: item.accessControl, applicationPassword: nil)
            sealed.append((item, new.row, new.hashes))
        }
        return try store.write { transaction in
            var report = report
            for (item, row, hashes) in sealed {
                let existing = try transaction.rows(
                    RowFilter(
                        itemClass: row.itemClass, accessGroupHashes: nil, synchronizable: nil,
                        primaryKeyHashes: [row.primaryKeyHash]))
                guard let current = existing.first, let id = current.id else {
                    try transaction.insert(row, attributeHashes: hashes)
                    report.added += 1
                    continue
                }
                let held = try self.open(current)
                guard replacing || item.modified > Self.modified(held.record) else {
                    report.kept += 1
                    continue
                }
                let replacement = try self.seal(
                    item.record, secret: item.secret, itemClass: item.itemClass, identity: current.identity,
                    version: current.version + 1, accessControl: item.accessControl, applicationPassword: nil)
                try transaction.replace(id, with: replacement.row, attributeHashes: replacement.hashes)
                report.replaced += 1
            }
            return report
        }
    }

    static func modified(_ record: ItemRecord) -> Date {
        guard case .date(let date)? = record.attributes[CommonAttribute.modificationDate] else { return .distantPast }
        return date
    }

    func requireUnlocked(_ why: String) throws(KeychainError) {
        guard try enclave.status().isUnlocked else {
            throw KeychainError(
                .errSecInteractionNotAllowed, "the keychain is locked: unlock it first (\(why))")
        }
    }
}

/// An item of a backup, checked as an add is, before anything is written: its class, its
/// attributes and their types, its access group, accessibility and dates, its secret's size,
/// and that an item in the clear is one that may migrate.
struct RestoredItem {
    var itemClass: ItemClass
    var record: ItemRecord
    var secret: SecretBytes
    var accessControl: StoredAccessControl?
    var modified: Date

    /// - Throws: `errSecDecode`, naming what is wrong, for an item the keychain cannot take.
    init(_ item: BackupItem, sealedToDevice: Bool) throws(KeychainError) {
        func refused(_ why: String) -> KeychainError {
            KeychainError(
                .errSecDecode, "the backup holds an item the keychain cannot take (\(why)); nothing was restored")
        }
        guard let itemClass = ItemClass(rawValue: item.itemClass), itemClass.isImplemented else {
            throw refused("an item of class \(item.itemClass)")
        }
        let record: ItemRecord
        do {
            record = try ItemRecord.decode(item.attributes)
            var others = record.attributes
            for name in [
                CommonAttribute.accessGroup, CommonAttribute.accessible, CommonAttribute.synchronizable,
                CommonAttribute.creationDate, CommonAttribute.modificationDate,
            ] {
                others.removeValue(forKey: name)
            }
            try RequestValidation.checkAttributes(others, of: itemClass, writing: true)
            try RequestValidation.checkSecret(item.secret)
        } catch {
            throw refused(error.message)
        }
        guard case .string(let group)? = record.attributes[CommonAttribute.accessGroup], !group.isEmpty,
            case .string(let rawAccessibility)? = record.attributes[CommonAttribute.accessible],
            let accessibility = Accessibility(rawValue: rawAccessibility),
            case .bool(let synchronizable)? = record.attributes[CommonAttribute.synchronizable],
            case .date = record.attributes[CommonAttribute.creationDate],
            case .date(let modified)? = record.attributes[CommonAttribute.modificationDate]
        else { throw refused("its access group, accessibility, synchronizable flag or dates are missing") }
        let accessControl: StoredAccessControl?
        do {
            accessControl = try item.accessControl.map { (bytes: Data) throws(KeychainError) in
                try StoredAccessControl.decode(bytes)
            }
        } catch {
            throw refused("its access control is malformed")
        }
        guard accessibility.protectionClass != .whenPasscodeSet else {
            throw refused("a WhenPasscodeSetThisDeviceOnly item, which never leaves its device")
        }
        guard sealedToDevice || (!accessibility.isThisDeviceOnly && accessControl == nil) else {
            throw refused("a device-only item that was not sealed to its device")
        }
        guard accessControl == nil || !synchronizable else {
            throw refused("a synchronizable item with an access control")
        }
        guard record.attributes["tkid"] == nil else { throw refused("a token's item, which never leaves its device") }
        guard accessControl?.control.flags.contains(.applicationPassword) != true else {
            throw refused("an item under an app's password, which never leaves its device")
        }
        self.itemClass = itemClass
        self.record = record
        self.secret = item.secret
        self.accessControl = accessControl
        self.modified = modified
    }
}
