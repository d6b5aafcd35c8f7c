import Enclave
import Foundation
import GRDB
import Keychain
import KeychainStore
import Testing

/// Items are erased only by the explicit, authenticated paths, and what is deleted is gone from
/// the database file and its write-ahead log before the call returns (issue: "Deleted means
/// gone", and the erase paths of "Never delete on a mismatch").
@Suite struct ErasureTests {
    func add(_ keychain: TestKeychain, _ account: String, secret: String, _ accessibility: Accessibility? = nil) throws
    {
        _ = try keychain.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["acct": .string(account)], accessibility: accessibility,
                    secret: SecretBytes(utf8: secret))))
    }

    func count(_ keychain: TestKeychain) throws -> Int {
        guard case .count(let count) = try keychain.perform(.countItems(accessibility: nil), owner: true) else {
            return -1
        }
        return count
    }

    /// The sealed secret of the row for `account`, as a copy of the file would show it.
    func sealedSecret(_ keychain: TestKeychain) throws -> [Data] {
        try DatabaseQueue(path: keychain.databaseURL.path).read {
            try Data.fetchAll($0, sql: "SELECT secret FROM items")
        }
    }

    func files(_ keychain: TestKeychain) throws -> Data {
        var bytes = try Data(contentsOf: keychain.databaseURL)
        bytes.append((try? Data(contentsOf: URL(fileURLWithPath: keychain.databaseURL.path + "-wal"))) ?? Data())
        return bytes
    }

    @Test func aDeletedItemsCiphertextIsGoneFromTheDatabaseAndItsLog() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add(keychain, "a", secret: "first")
        let sealed = try #require(try sealedSecret(keychain).first)
        #expect(try files(keychain).range(of: sealed) != nil, "the ciphertext is on disk while the item exists")
        _ = try keychain.perform(.delete(ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")])))
        let bytes = try files(keychain)
        #expect(bytes.range(of: sealed) == nil)
        #expect(bytes.range(of: sealed.prefix(16)) == nil, "not even a part of it")
    }

    @Test func anUpdatedSecretsOldCiphertextIsGoneFromTheFiles() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add(keychain, "a", secret: "first")
        let old = try #require(try sealedSecret(keychain).first)
        _ = try keychain.perform(
            .update(
                ItemQuery(itemClass: .genericPassword, attributes: ["acct": .string("a")]),
                ItemChanges(secret: SecretBytes(utf8: "second"))))
        #expect(try sealedSecret(keychain).first != old)
        #expect(try files(keychain).range(of: old) == nil)
    }

    @Test func aRemovedPasscodesItemsAreGoneFromTheFilesAndCounted() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "kept", secret: "kept", .afterFirstUnlock)
        try add(keychain, "device-only", secret: "gone", .whenPasscodeSetThisDeviceOnly)
        let before = try sealedSecret(keychain)
        let reply = try keychain.perform(.removePasscode(current: SecretBytes(utf8: "1234")))
        guard case .count(let deleted) = reply else { Issue.record("\(reply)"); return }
        #expect(deleted == 1)
        #expect(try count(keychain) == 1)
        let gone = try #require(Set(before).subtracting(try sealedSecret(keychain)).first)
        #expect(try files(keychain).range(of: gone) == nil)
    }

    @Test func eraseNeedsThePasscodeThenRemovesEveryItemAndKey() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        for account in ["a", "b", "c"] { try add(keychain, account, secret: "s-\(account)") }
        let sealed = try sealedSecret(keychain)
        #expect(throws: KeychainError.errSecParam) { try keychain.perform(.erase(passcode: nil), owner: true) }
        #expect(throws: KeychainError.errSecAuthFailed) {
            try keychain.perform(.erase(passcode: SecretBytes(utf8: "0000")), owner: true)
        }
        #expect(try count(keychain) == 3)
        // The passcode is the owner's proof: a caller that is not the owner's tool erases with it.
        let reply = try keychain.perform(.erase(passcode: SecretBytes(utf8: "1234")))
        guard case .count(let erased) = reply else { Issue.record("\(reply)"); return }
        #expect(erased == 3)
        #expect(try count(keychain) == 0)
        #expect(try !keychain.status().passcodeSet)
        for value in sealed { #expect(try files(keychain).range(of: value) == nil) }
        // The erased keychain opens again as a new, empty one, and takes new items.
        let restarted = try keychain.restarted()
        try add(restarted, "new", secret: "new")
        #expect(try count(restarted) == 1)
    }

    @Test func tenFailedAttemptsWithEraseOnRemoveEveryItem() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        _ = try keychain.perform(.setEraseAfterFailedAttempts(true, passcode: SecretBytes(utf8: "1234")))
        try add(keychain, "a", secret: "s")
        for attempt in 0..<10 {
            keychain.clock.advance(3601)
            #expect(throws: KeychainError.errSecAuthFailed) { try keychain.unlock("000\(attempt)") }
        }
        #expect(try count(keychain) == 0)
        #expect(try !keychain.status().passcodeSet)
        #expect(try keychain.restarted().status().failedAttempts == 0)
    }

    @Test func aCrashBetweenDestroyingTheKeysAndDeletingTheRowsIsFinishedAtTheNextOpen() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "a", secret: "s")
        // The Enclave's half of an erase alone, as if the process died before the server's half.
        let enclave = try Enclave(
            directory: keychain.directory, clock: keychain.clock, cache: ProcessClassKeyCache(),
            passcodeLimits: TestKeychain.fastLimits)
        try enclave.erase(passcode: SecretBytes(utf8: "1234"))
        #expect(try KeychainStore.inspect(keychain.databaseURL)?.itemCount == 1)
        let reopened = try keychain.restarted()
        #expect(try count(reopened) == 0)
        #expect(try KeychainStore.inspect(keychain.databaseURL)?.itemCount == 0)
    }

    @Test func aDatabasePutBackAfterAnEraseIsRefusedNotDeleted() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "a", secret: "s")
        let oldDatabase = try KeychainFiles.copy(keychain.directory)
        defer { try? FileManager.default.removeItem(at: oldDatabase) }
        _ = try keychain.perform(.erase(passcode: SecretBytes(utf8: "1234")), owner: true)
        for suffix in ["", "-wal"] {
            try? FileManager.default.removeItem(atPath: keychain.databaseURL.path + suffix)
            try? FileManager.default.copyItem(
                atPath: oldDatabase.path + "/keychain.db" + suffix, toPath: keychain.databaseURL.path + suffix)
        }
        try? FileManager.default.removeItem(atPath: keychain.databaseURL.path + "-shm")
        // A keybag whose erase is finished deletes nothing more: a database put back afterwards
        // is another keychain's, refused and kept.
        #expect(throws: KeychainError.errSecDecode) { try keychain.restarted() }
        #expect(try KeychainStore.inspect(keychain.databaseURL)?.itemCount == 1)
    }
}
