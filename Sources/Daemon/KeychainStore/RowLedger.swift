import Foundation
import GRDB
import KeychainProtocol
import StorageContracts
import Synchronization

/// The row ledger: which version of which row the keychain last wrote, authenticated, so that
/// somebody able to write the database file (or to put back an older copy of it) cannot bring
/// back an old secret, a deleted item or an item as it was before its access control was set.
///
/// Every row has a version (1 when added, one more at each update) bound into its ciphertexts
/// (``StoredRow/version``). The ledger, in `meta` under `rowLedger`, is the XOR of a keyed hash
/// of every (identity, version) pair, sealed with a keyed hash to the database's commit
/// generation; the keys are the Enclave's (``RowLedgerAuthority``). Every write transaction
/// updates it. When the store first reads a generation it has not seen, it recomputes the set
/// from every row and compares (one scan of `items`' identities and versions, one keyed hash
/// per row), then keeps every row's version in memory and checks each row it fetches against
/// it: a row whose version is not the one remembered (written back from an older copy) or
/// whose identity is unknown (re-inserted after its deletion) is refused with `errSecDecode`,
/// as is a database whose rows do not add up to its ledger.
///
/// A whole database put back with its own older ledger is caught by the generation the Enclave
/// records beside the keybag (``DatabaseIdentity``), when the keychain is opened.
final class RowLedger: Sendable {
    /// The ledger as verified at one generation: every row's version and the set hash.
    struct Snapshot: Sendable {
        var generation: UInt64
        var setHash: [UInt8]
        var versions: [Key: Int64]

        static let empty = Snapshot(generation: 0, setHash: Array(repeating: 0, count: 32), versions: [:])
    }

    static let metaKey = "rowLedger"
    private let authority: any RowLedgerAuthority
    private let url: URL
    /// The newest snapshot verified or written by this process.
    private let known = Mutex<Snapshot?>(nil)

    init(authority: any RowLedgerAuthority, url: URL) {
        self.authority = authority
        self.url = url
    }

    /// The verified ledger of the database as `db` sees it, for a read; nil when the database
    /// has no ledger yet and the keybag does not ask for one (a keychain made before ledgers).
    ///
    /// - Throws: `errSecDecode` when the ledger is missing although required, does not belong
    ///   to this generation, or the rows do not add up to it; `errSecInteractionNotAllowed`
    ///   before the first unlock.
    func verified(
        _ transaction: StoreTransaction, authenticator given: (any RowLedgerAuthenticator)? = nil
    ) throws(KeychainError) -> Snapshot? {
        let generation = try fetch { try transaction.generation() }
        if let snapshot = known.withLock({ $0 }), snapshot.generation == generation { return snapshot }
        guard let stored = try fetch({ try transaction.metaValue(Self.metaKey) }) else {
            guard try !authority.rowLedgerRequired() else {
                throw KeychainError(
                    .errSecDecode,
                    "the keychain database lost its row ledger, which the keybag records it has: the database was "
                        + "altered. \(Self.recovery)"
                )
            }
            return nil
        }
        let authenticator: any RowLedgerAuthenticator
        if let given { authenticator = given } else { authenticator = try authority.rowLedgerAuthenticator() }
        let parts = stored.split(separator: " ")
        guard parts.count == 3, let storedGeneration = UInt64(parts[0]),
            let setHash = Data(base64Encoded: String(parts[1])).map(Array.init),
            let tag = Data(base64Encoded: String(parts[2])).map(Array.init),
            storedGeneration == generation, setHash.count == 32,
            tag == authenticator.summaryTag(generation: generation, setHash: setHash)
        else {
            throw KeychainError(
                .errSecDecode,
                "the keychain database's row ledger is not authentic for its generation \(generation): the "
                    + "database or its ledger was altered or put back from an older copy. \(Self.recovery)"
            )
        }
        var scanned = try scan(transaction, authenticator)
        guard scanned.setHash == setHash else {
            throw KeychainError(
                .errSecDecode,
                "the keychain database's rows do not match its row ledger: a row was written back from an older "
                    + "copy, re-inserted after its deletion, or removed. No item was returned. \(Self.recovery)"
            )
        }
        scanned.generation = generation
        remember(scanned)
        return scanned
    }

    /// The ledger a write transaction changes: the verified one, or, for a keychain whose
    /// database has none yet or when `resetting` (a new or erased keychain's stamp), one made
    /// from the rows as they are.
    func working(_ db: Database, resetting: Bool) throws(KeychainError) -> Working {
        let authenticator = try authority.rowLedgerAuthenticator()
        let transaction = StoreTransaction(connection: .writer(db), ledger: nil)
        if !resetting, let snapshot = try verified(transaction, authenticator: authenticator) {
            return Working(snapshot, authenticator: authenticator, establishing: false)
        }
        return Working(try scan(transaction, authenticator), authenticator: authenticator, establishing: !resetting)
    }

    /// Writes `working`'s ledger for the transaction's new `generation`.
    func seal(_ working: Working, generation: UInt64, _ db: Database) throws {
        guard let authenticator = working.authenticator else { throw KeychainError.errSecInternalComponent }
        working.sealedGeneration = generation
        let tag = authenticator.summaryTag(generation: generation, setHash: working.setHash)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").execute(
            arguments: [
                Self.metaKey,
                "\(generation) \(Data(working.setHash).base64EncodedString()) \(Data(tag).base64EncodedString())",
            ])
    }

    /// Called once the transaction that sealed `working` committed.
    func committed(_ working: Working) {
        guard let generation = working.sealedGeneration else { return }
        known.withLock { working.committedSnapshot(updating: &$0, generation: generation) }
        if working.establishing { try? authority.recordRowLedgerEstablished() }
    }

    /// Forgets what was verified (the database may have been rolled back by a failed commit).
    func forget() {
        known.withLock { $0 = nil }
    }

    /// Keeps the newest snapshot: a read that began before a commit verifies an older one.
    private func remember(_ snapshot: Snapshot) {
        known.withLock { known in
            if known == nil || known!.generation < snapshot.generation { known = snapshot }
        }
    }

    private func scan(
        _ transaction: StoreTransaction, _ authenticator: any RowLedgerAuthenticator
    ) throws(KeychainError) -> Snapshot {
        var snapshot = Snapshot.empty
        try fetch {
            try transaction.forEachRowVersion { identity, version in
                snapshot.versions[Key(identity)] = version
                Self.xor(&snapshot.setHash, authenticator.pairTag(identity: Array(identity), version: version))
            }
        }
        return snapshot
    }

    private func fetch<Value>(_ body: () throws -> Value) throws(KeychainError) -> Value {
        do {
            return try body()
        } catch {
            throw KeychainStore.map(error, url: url)
        }
    }

    static func xor(_ accumulator: inout [UInt8], _ tag: [UInt8]) {
        for index in accumulator.indices { accumulator[index] ^= tag[index] }
    }

    private static let recovery =
        "Nothing was changed. Restore the keychain's files as they were together, or erase the keychain with "
            + "`keychainctl erase`."
}

extension RowLedger {
    /// The ledger inside one transaction. A read only checks rows against it; a write also
    /// records each row it inserts, replaces or deletes, and undoes a failed write's records
    /// when its savepoint is rolled back.
    ///
    /// A write's records are kept apart from the snapshot it started from (`changed`), so that
    /// recording a row costs the same with a hundred rows as with a hundred thousand: the
    /// snapshot, shared with what the ledger remembers, is never copied, and once the
    /// transaction commits its records are merged into the remembered snapshot in place.
    final class Working {
        /// The snapshot the transaction started from; unchanged by it, and let go of once its
        /// records are merged into the remembered snapshot (which then has the only reference
        /// to the versions, and is changed in place).
        private var base: Snapshot
        /// True once every row was deleted (``clear()``): `base`'s versions no longer hold.
        private var baseCleared = false
        /// The version each row this transaction wrote has now (nil: deleted).
        private var changed: [Key: Int64?] = [:]
        /// The set hash with this transaction's records.
        fileprivate private(set) var setHash: [UInt8]
        /// The generation this transaction's ledger was sealed to (``RowLedger/seal(_:generation:_:)``).
        fileprivate var sealedGeneration: UInt64?
        let authenticator: (any RowLedgerAuthenticator)?
        /// True when this transaction writes the database's first ledger over existing rows.
        let establishing: Bool
        /// What one record replaced, to put back when its write is rolled back.
        private enum Undo {
            case pair(Key, changedBefore: Int64??, setHashBefore: [UInt8])
            case cleared(changedBefore: [Key: Int64?], baseClearedBefore: Bool, setHashBefore: [UInt8])
        }
        private var undos: [Undo] = []

        init(_ snapshot: Snapshot, authenticator: (any RowLedgerAuthenticator)?, establishing: Bool) {
            base = snapshot
            setHash = snapshot.setHash
            self.authenticator = authenticator
            self.establishing = establishing
        }

        /// Refuses a row that is not the version the ledger holds.
        func check(_ identity: Key, version: Int64) throws(KeychainError) {
            guard let known = self.version(of: identity) else {
                throw KeychainError(
                    .errSecDecode,
                    "a keychain row that its row ledger does not hold was found (an item deleted earlier was put "
                        + "back, or a row was copied in): the database was altered; no item was returned. "
                        + "\(RowLedger.recovery)"
                )
            }
            guard known == version else {
                throw KeychainError(
                    .errSecDecode,
                    "a keychain row is at version \(version) but the keychain last wrote version \(known): the row "
                        + "was put back from an older copy; no item was returned. \(RowLedger.recovery)"
                )
            }
        }

        /// Records that the row `identity` went from version `from` to `to` (nil: absent).
        func record(identity: Data, from: Int64?, to: Int64?) throws(KeychainError) {
            guard let authenticator else {
                throw KeychainError(.errSecInternalComponent, "a read transaction tried to change the row ledger")
            }
            let key = Key(identity)
            undos.append(.pair(key, changedBefore: changed[key], setHashBefore: setHash))
            if let from { RowLedger.xor(&setHash, authenticator.pairTag(identity: Array(identity), version: from)) }
            if let to { RowLedger.xor(&setHash, authenticator.pairTag(identity: Array(identity), version: to)) }
            changed.updateValue(to, forKey: key)
        }

        /// Records that every row was deleted.
        func clear() {
            undos.append(.cleared(changedBefore: changed, baseClearedBefore: baseCleared, setHashBefore: setHash))
            changed = [:]
            baseCleared = true
            setHash = Snapshot.empty.setHash
        }

        /// Starts one write's records.
        func beginWrite() {
            undos = []
        }

        /// Undoes the records of the write whose savepoint was rolled back.
        func rollBackWrite() {
            for undo in undos.reversed() {
                switch undo {
                case .pair(let key, let changedBefore, let setHashBefore):
                    if let changedBefore {
                        changed.updateValue(changedBefore, forKey: key)
                    } else {
                        changed.removeValue(forKey: key)
                    }
                    setHash = setHashBefore
                case .cleared(let changedBefore, let baseClearedBefore, let setHashBefore):
                    (changed, baseCleared, setHash) = (changedBefore, baseClearedBefore, setHashBefore)
                }
            }
            undos = []
        }

        /// The version the ledger holds for `key` in this transaction; nil when it holds none.
        private func version(of key: Key) -> Int64? {
            if let version = changed[key] { return version }
            return baseCleared ? nil : base.versions[key]
        }

        /// The snapshot after this transaction: `remembered` changed in place when it is the
        /// one the transaction started from, else `base` with the records applied.
        fileprivate func committedSnapshot(updating remembered: inout Snapshot?, generation: UInt64) {
            if !baseCleared, var current = remembered, current.generation == base.generation,
                current.setHash == base.setHash
            {
                remembered = nil
                base.versions = [:]
                for (key, version) in changed { current.versions[key] = version }
                (current.generation, current.setHash) = (generation, setHash)
                remembered = current
                return
            }
            var snapshot = baseCleared ? Snapshot.empty : base
            for (key, version) in changed { snapshot.versions[key] = version }
            (snapshot.generation, snapshot.setHash) = (generation, setHash)
            if remembered == nil || remembered!.generation < generation { remembered = snapshot }
        }
    }
}
