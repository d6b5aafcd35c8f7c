import Foundation
import GRDB
import Keychain
import Testing

/// A keybag and a database that do not belong together are refused with errSecDecode and left
/// byte for byte as they were; nothing is deleted, and the items come back when the right files
/// are put back (issue: "Never delete on a mismatch"). Each case deleted every item before.
@Suite struct NeverDeleteOnMismatchTests {
    /// A keychain with a passcode and three items.
    func seeded() throws -> TestKeychain {
        let keychain = try TestKeychain.make()
        try keychain.setPasscode("1234")
        for account in ["a", "b", "c"] {
            _ = try keychain.perform(
                .add(
                    NewItem(
                        itemClass: .genericPassword, attributes: ["acct": .string(account)],
                        secret: SecretBytes(utf8: "secret-\(account)"))))
        }
        return keychain
    }

    func itemCount(_ keychain: TestKeychain) throws -> Int {
        guard
            case .items(let items) = try keychain.perform(
                .copyMatching(ItemQuery(itemClass: .genericPassword, limit: .all, returns: .attributes)))
        else { return 0 }
        return items.count
    }

    /// Opening `directory` is refused with errSecDecode and changes no file.
    func expectRefusedUntouched(
        _ directory: URL, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try KeychainFiles(directory)
        do {
            _ = try TestKeychain.open(directory, clock: StubClock(), cache: .init())
            Issue.record("the keychain opened", sourceLocation: sourceLocation)
        } catch let error as KeychainError {
            #expect(error.status == errSecDecode, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(words), "\(error.message)", sourceLocation: sourceLocation)
            #expect(
                error.message.contains("keychainctl erase"), "the message says how to recover: \(error.message)",
                sourceLocation: sourceLocation)
        }
        #expect(try KeychainFiles(directory) == before, sourceLocation: sourceLocation)
    }

    @Test func aMissingKeybagBesideItemsIsRefusedAndRestoringItBringsThemBack() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let keybag = keychain.directory.appendingPathComponent("keybag")
        let saved = try Data(contentsOf: keybag)
        try FileManager.default.removeItem(at: keybag)
        try expectRefusedUntouched(keychain.directory, mentioning: "keybag")
        #expect(!FileManager.default.fileExists(atPath: keybag.path), "no new keybag was made")
        try saved.write(to: keybag)
        let restored = try keychain.restarted()
        try restored.unlock("1234")
        #expect(try itemCount(restored) == 3)
        #expect(try restored.status().passcodeSet)
    }

    @Test func aChangedKeychainIDInTheDatabaseIsRefused() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let id = try DatabaseQueue(path: keychain.databaseURL.path).read {
            try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'keychainID'")
        }
        try KeychainFiles.edit(
            keychain.databaseURL, "UPDATE meta SET value = 'not-this-keychain' WHERE key = 'keychainID'")
        try expectRefusedUntouched(keychain.directory, mentioning: "another keychain")
        try KeychainFiles.edit(keychain.databaseURL, "UPDATE meta SET value = '\(id ?? "")' WHERE key = 'keychainID'")
        let restored = try keychain.restarted()
        try restored.unlock("1234")
        #expect(try itemCount(restored) == 3)
    }

    @Test func anotherKeychainsDatabaseCopiedInIsRefused() throws {
        let keychain = try seeded()
        let other = try seeded()
        defer { keychain.remove(); other.remove() }
        let mine = try KeychainFiles.copy(keychain.directory)
        defer { try? FileManager.default.removeItem(at: mine) }
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: mine.path + "/keychain.db" + suffix)
            try? FileManager.default.copyItem(
                atPath: other.databaseURL.path + suffix, toPath: mine.path + "/keychain.db" + suffix)
        }
        try expectRefusedUntouched(mine, mentioning: "another keychain")
    }

    @Test func aMissingOrEmptyDatabaseBesideTheKeybagIsRefused() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let missing = try KeychainFiles.copy(
            keychain.directory, leavingOut: ["keychain.db", "keychain.db-wal", "keychain.db-shm"])
        defer { try? FileManager.default.removeItem(at: missing) }
        try expectRefusedUntouched(missing, mentioning: "missing or empty")
        #expect(
            !FileManager.default.fileExists(atPath: missing.appendingPathComponent("keychain.db").path),
            "no new database was made")

        let empty = try KeychainFiles.copy(
            keychain.directory, leavingOut: ["keychain.db", "keychain.db-wal", "keychain.db-shm"])
        defer { try? FileManager.default.removeItem(at: empty) }
        _ = FileManager.default.createFile(
            atPath: empty.appendingPathComponent("keychain.db").path, contents: Data(),
            attributes: [.posixPermissions: 0o600])
        try expectRefusedUntouched(empty, mentioning: "missing or empty")
    }

    @Test func aMissingOrTruncatedWriteAheadLogThatLostCommitsIsRefused() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        // The server is open: the latest commits are in the write-ahead log only.
        let wal = try Data(contentsOf: URL(fileURLWithPath: keychain.databaseURL.path + "-wal"))
        #expect(wal.count > 0)

        let complete = try KeychainFiles.copy(keychain.directory)
        defer { try? FileManager.default.removeItem(at: complete) }
        let control = try TestKeychain.open(complete, clock: StubClock(), cache: .init())
        try control.unlock("1234")
        #expect(try itemCount(control) == 3, "a copy with its log opens")

        let missing = try KeychainFiles.copy(keychain.directory, leavingOut: ["keychain.db-wal", "keychain.db-shm"])
        defer { try? FileManager.default.removeItem(at: missing) }
        try expectRefusedUntouched(missing, mentioning: "lost committed changes")

        let truncated = try KeychainFiles.copy(keychain.directory, leavingOut: ["keychain.db-shm"])
        defer { try? FileManager.default.removeItem(at: truncated) }
        try wal.prefix(wal.count / 2).write(to: truncated.appendingPathComponent("keychain.db-wal"))
        try expectRefusedUntouched(truncated, mentioning: "lost committed changes")
    }

    @Test func aMissingGenerationRecordIsRefused() throws {
        let keychain = try seeded()
        defer { keychain.remove() }
        let copy = try KeychainFiles.copy(keychain.directory, leavingOut: ["database-state"])
        defer { try? FileManager.default.removeItem(at: copy) }
        try expectRefusedUntouched(copy, mentioning: "database-state")
    }
}
