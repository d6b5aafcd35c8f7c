import Crypto
import Enclave
import Foundation
import GRDB
import Synchronization

/// The floor of an embedded read on this design: the work every read of a sealed item must do,
/// with the same libraries and nothing else. Beside the plain SQLite read (``PlainSQLiteBaseline``)
/// it says what the design's protections cost by themselves, apart from the keychain's code:
///
/// - the two class keys a read of a WhenUnlocked item needs (the index key comes from the
///   AfterFirstUnlock class), each loaded from the class-key cache the embedded keychain uses
///   (the user's kernel keyring, or this process's memory where the kernel refuses keyring calls)
///   and compared with the entry opened before, so that a lock by another process is seen;
/// - one keyed hash (HMAC-SHA256) of the lookup's primary key;
/// - the row found by that hash, from the same SQLite build with the same settings;
/// - the row's authenticator checked (HMAC-SHA256 over its ciphertexts, as the row ledger vouches
///   for each row read);
/// - two AES-GCM opens: the item's key under the class key, then its secret under the item key.
///
/// What it leaves out, so it is a floor and not a second keychain: the query's validation, access
/// groups and access control, the attributes (kept opened after a first read), the audit line,
/// and the `SecItem` dictionaries in and out.
final class SealedReadFloor: Sendable {
    private static let opened = Mutex<SealedReadFloor?>(nil)

    /// The floor the running benchmark's setup opened.
    static var current: SealedReadFloor {
        get {
            guard let floor = opened.withLock({ $0 }) else { preconditionFailure("no sealed-read floor opened") }
            return floor
        }
        set { opened.withLock { $0 = newValue } }
    }

    private let pool: DatabasePool
    private let cache: any ClassKeyCache
    /// The two class-key entries, by name, as stored: each read loads and compares them.
    private let entries: [(name: String, sealed: Data)]
    private let classKey: SymmetricKey
    private let indexKey: SymmetricKey
    private let rowKey: SymmetricKey

    /// A database of `count` sealed items beside the fixtures, filled anew for this process's
    /// keys, and two class-key entries in the cache (removed when the process ends).
    static func filled(count: Int) throws -> SealedReadFloor {
        try FileManager.default.createDirectory(at: Fixture.root, withIntermediateDirectories: true)
        let path = Fixture.root.appendingPathComponent("sealed-floor-\(count).db").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let floor = try SealedReadFloor(path: path)
        try floor.pool.write { db in
            try db.execute(sql: "CREATE TABLE items (pk BLOB UNIQUE NOT NULL, wrappedKey BLOB, secret BLOB, mac BLOB)")
            for index in 0..<count {
                let pk = floor.primaryKeyHash(index)
                let itemKey = SymmetricKey(size: .bits256)
                let wrappedKey = try itemKey.withUnsafeBytes {
                    try AES.GCM.seal($0, using: floor.classKey, authenticating: pk).combined!
                }
                let secret = try AES.GCM.seal(Data("secret-\(index)".utf8), using: itemKey, authenticating: pk)
                    .combined!
                try db.execute(
                    sql: "INSERT INTO items VALUES (?, ?, ?, ?)",
                    arguments: [pk, wrappedKey, secret, Data(floor.rowAuthenticator(pk, wrappedKey, secret))])
            }
        }
        return floor
    }

    private init(path: String) throws {
        pool = try PlainSQLiteBaseline.pool(at: path)
        cache = KernelKeyringClassKeyCache() ?? ProcessClassKeyCache()
        classKey = SymmetricKey(size: .bits256)
        indexKey = SymmetricKey(size: .bits256)
        rowKey = SymmetricKey(size: .bits256)
        var entries: [(name: String, sealed: Data)] = []
        for protectionClass in ["afterFirstUnlock", "whenUnlocked"] {
            let name = "swift-keychain-benchmark:\(getpid()):\(protectionClass)"
            // A sealed class key's size: a 32-byte key, its nonce and tag.
            let sealed = try AES.GCM.seal(Data(repeating: 0x5a, count: 32), using: SymmetricKey(size: .bits256))
                .combined!
            cache.store(name, sealed)
            entries.append((name, sealed))
        }
        self.entries = entries
        let cache = cache
        Self.stored.withLock { $0.append(contentsOf: entries.map { (cache, $0.name) }) }
        Self.removedAtExit
    }

    /// The class-key entries every floor opened stored, removed when the process ends: the
    /// user's kernel keyring outlives it.
    private static let stored = Mutex<[(cache: any ClassKeyCache, name: String)]>([])
    private static let removedAtExit: Void = {
        atexit { SealedReadFloor.stored.withLock { for entry in $0 { entry.cache.remove(entry.name) } } }
    }()

    /// One secret by its primary key, checked. Its row is read, checked and opened inside the
    /// read transaction, as the store opens rows.
    func read(_ index: Int) {
        for entry in entries {
            precondition(cache.load(entry.name) == entry.sealed, "a class-key entry changed")
        }
        let pk = primaryKeyHash(index)
        let secret = try? pool.read { db -> Data? in
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT wrappedKey, secret, mac FROM items WHERE pk = ?"), arguments: [pk])
            guard let row = try rows.next(), let wrappedKey = row[0] as Data?, let sealedSecret = row[1] as Data?,
                let mac = row[2] as Data?
            else { return nil }
            precondition(rowAuthenticator(pk, wrappedKey, sealedSecret) == mac, "a row's authenticator does not match")
            return try AES.GCM.open(AES.GCM.SealedBox(combined: wrappedKey), using: classKey, authenticating: pk)
                .withUnsafeBytes { itemKey in
                    try AES.GCM.open(
                        AES.GCM.SealedBox(combined: sealedSecret), using: SymmetricKey(data: itemKey),
                        authenticating: pk)
                }
        }
        precondition(secret == Data("secret-\(index)".utf8), "the sealed-read floor opened another secret")
    }

    private func primaryKeyHash(_ index: Int) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data("genp\u{0}bench\u{0}account-\(index)".utf8), using: indexKey))
    }

    /// The row's authenticator: HMAC-SHA256 of its key and ciphertexts, compared in constant time.
    private func rowAuthenticator(_ pk: Data, _ wrappedKey: Data, _ secret: Data) -> HMAC<SHA256>.MAC {
        var authenticator = HMAC<SHA256>(key: rowKey)
        for part in [pk, wrappedKey, secret] { authenticator.update(data: part) }
        return authenticator.finalize()
    }
}
