import Enclave
import Foundation
import Keychain
import KeychainServer
import Testing

/// Requirement 3 and the keybag rules: which classes are readable when, and what the passcode
/// does to them.
@Suite struct LockStateTests {
    func add(_ keychain: TestKeychain, _ account: String, _ accessibility: Accessibility) throws(KeychainError) {
        _ = try keychain.perform(.add(NewItem(
            itemClass: .genericPassword, attributes: ["acct": .string(account)], accessibility: accessibility,
            secret: SecretBytes(utf8: "secret-\(account)"))))
    }

    func read(
        _ keychain: TestKeychain, _ account: String, _ returns: ReturnSelection = .data
    ) throws(KeychainError) -> ItemResult? {
        guard
            case .items(let items) = try keychain.perform(
                .copyMatching(
                    ItemQuery(
                        itemClass: .genericPassword, attributes: ["acct": .string(account)], returns: returns)))
        else { return nil }
        return items.first
    }

    @Test func lockingHidesWhenUnlockedDataAndAttributesButNotAfterFirstUnlock() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "wu", .whenUnlocked)
        try add(keychain, "wuo", .whenUnlockedThisDeviceOnly)
        try add(keychain, "afu", .afterFirstUnlock)
        try add(keychain, "pc", .whenPasscodeSetThisDeviceOnly)
        try keychain.lock()
        for account in ["wu", "wuo", "pc"] {
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(keychain, account) }
            #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(keychain, account, .attributes) }
        }
        #expect(try read(keychain, "afu")?.secret?.copyData() == Data("secret-afu".utf8))
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try add(keychain, "new", .whenUnlocked) }
        try keychain.unlock("1234")
        #expect(try read(keychain, "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        #expect(try read(keychain, "pc")?.secret?.copyData() == Data("secret-pc".utf8))
    }

    /// Class keys opened once are remembered per process (a read would otherwise open and derive
    /// them again), but a lock by any other process sharing the key cache, like a second client
    /// of the kernel keyring, still hides the items at the very next read, and a change of
    /// passcode made elsewhere is seen at once.
    @Test func aLockByAnotherProcessTakesEffectAtOnceForKeysThisOneRemembers() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add(keychain, "wu", .whenUnlocked)
        let other = try TestKeychain.open(keychain.directory, clock: keychain.clock, cache: keychain.cache)
        #expect(try read(other, "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        try keychain.setPasscode("1234")
        #expect(try read(other, "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        try keychain.lock()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(other, "wu") }
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(other, "wu", .attributes) }
        try keychain.unlock("1234")
        #expect(try read(other, "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        try other.lock()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(keychain, "wu") }
    }

    /// The kernel keyring's cache remembers where it found an entry, so a load is one read; a
    /// lock by another process (another cache, its own memory) must still take effect at once,
    /// and a new unlock must be seen.
    @Test func theKernelKeyringCacheSeesAnotherProcesssLockAndNextUnlock() throws {
        let locker = try #require(KernelKeyringClassKeyCache())
        let reader = try #require(KernelKeyringClassKeyCache())
        let name = "swift-keychain:test-\(UUID().uuidString):cku"
        defer { locker.remove(name) }
        locker.store(name, Data("first unlock".utf8))
        #expect(reader.load(name) == Data("first unlock".utf8))
        #expect(reader.load(name) == Data("first unlock".utf8), "read again from the serial it remembers")
        locker.remove(name)
        #expect(reader.load(name) == nil, "a lock elsewhere is seen at the next load")
        locker.store(name, Data("second unlock".utf8))
        #expect(reader.load(name) == Data("second unlock".utf8))
        locker.store(name, Data("changed entry".utf8))
        #expect(reader.load(name) == Data("changed entry".utf8))
    }

    @Test func afterARestartNothingIsReadableUntilTheFirstUnlock() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "afu", .afterFirstUnlock)
        let restarted = try keychain.restarted()
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try read(restarted, "afu") }
        #expect(try restarted.status().unlockedClasses.isEmpty)
        try restarted.unlock("1234")
        #expect(try read(restarted, "afu")?.secret?.copyData() == Data("secret-afu".utf8))
        try restarted.lock()
        #expect(try read(restarted, "afu") != nil)
    }

    @Test func withoutAPasscodeEverythingIsAvailableAndLockDoesNothing() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try add(keychain, "wu", .whenUnlocked)
        try keychain.lock()
        let restarted = try keychain.restarted()
        #expect(try read(restarted, "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        #expect(try restarted.status().passcodeSet == false)
    }

    @Test func whenPasscodeSetItemsNeedAPasscode() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        #expect(throws: KeychainError.errSecNotAvailable) { try add(keychain, "pc", .whenPasscodeSetThisDeviceOnly) }
    }

    @Test func removingThePasscodeDeletesWhenPasscodeSetItemsOnly() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "pc", .whenPasscodeSetThisDeviceOnly)
        try add(keychain, "wu", .whenUnlocked)
        _ = try keychain.perform(.removePasscode(current: SecretBytes(utf8: "1234")))
        #expect(throws: KeychainError.errSecItemNotFound) { try read(keychain, "pc") }
        #expect(try read(keychain.restarted(), "wu")?.secret?.copyData() == Data("secret-wu".utf8))
        // A new passcode brings a new, empty WhenPasscodeSet class.
        try keychain.setPasscode("5678")
        try add(keychain, "pc2", .whenPasscodeSetThisDeviceOnly)
        #expect(try read(keychain, "pc2") != nil)
    }

    @Test func changingThePasscodeKeepsEveryItem() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try add(keychain, "pc", .whenPasscodeSetThisDeviceOnly)
        _ = try keychain.perform(.setPasscode(current: SecretBytes(utf8: "1234"), new: SecretBytes(utf8: "abcd")))
        let restarted = try keychain.restarted()
        #expect(throws: KeychainError.errSecAuthFailed) { try restarted.unlock("1234") }
        try restarted.unlock("abcd")
        #expect(try read(restarted, "pc")?.secret?.copyData() == Data("secret-pc".utf8))
    }

    @Test func passcodeRulesAreEnforced() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        #expect(throws: KeychainError.errSecParam) { try keychain.setPasscode("12") }
        try keychain.setPasscode("1234")
        #expect(throws: KeychainError.errSecParam) { try keychain.setPasscode("5678") }
        #expect(throws: KeychainError.errSecAuthFailed) {
            try keychain.perform(.setPasscode(current: SecretBytes(utf8: "0000"), new: SecretBytes(utf8: "5678")))
        }
    }
}

/// The failed-attempt counter and its delays (Apple Platform Security, "Passcodes and passwords").
@Suite struct PasscodeAttemptTests {
    @Test(arguments: [(1, 0.0), (4, 0), (5, 60), (6, 300), (7, 900), (8, 900), (9, 3600), (12, 3600)])
    func theDelayTableMatchesApples(failures: Int, seconds: Double) {
        #expect(PasscodeDelay.seconds(afterFailures: failures) == seconds)
    }

    func fail(_ keychain: TestKeychain, _ guess: String) {
        #expect(throws: KeychainError.self) { try keychain.unlock(guess) }
    }

    @Test func failuresAreCountedAndTheFifthImposesAMinute() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        try keychain.lock()
        for guess in ["0001", "0002", "0003", "0004", "0005"] { fail(keychain, guess) }
        let status = try keychain.status()
        #expect(status.failedAttempts == 5)
        #expect(status.secondsUntilNextAttempt == 60)
        // During the delay even the right passcode is refused, and not counted.
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try keychain.unlock("1234") }
        #expect(try keychain.status().failedAttempts == 5)
        keychain.clock.advance(61)
        try keychain.unlock("1234")
        #expect(try keychain.status().failedAttempts == 0)
    }

    @Test func theSameWrongPasscodeIsNotCountedTwice() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        for _ in 0..<4 { fail(keychain, "0000") }
        #expect(try keychain.status().failedAttempts == 1)
        fail(keychain, "1111")
        fail(keychain, "0000")
        #expect(try keychain.status().failedAttempts == 3)
    }

    @Test func theCountAndTheDelaySurviveAProcessRestart() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        for guess in ["0001", "0002", "0003", "0004", "0005", ] { fail(keychain, guess) }
        keychain.clock.advance(30)
        let restarted = try keychain.restarted()
        let status = try restarted.status()
        #expect(status.failedAttempts == 5)
        #expect(status.secondsUntilNextAttempt == 30)
    }

    @Test func aRebootRestartsTheDelayPeriodRatherThanEndingIt() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        for guess in ["0001", "0002", "0003", "0004", "0005", "0006"] {
            keychain.clock.advance(3600)
            fail(keychain, guess)
        }
        keychain.clock.advance(200)
        #expect(try keychain.status().secondsUntilNextAttempt == 100)
        keychain.clock.reboot()
        let rebooted = try keychain.restarted()
        #expect(try rebooted.status().secondsUntilNextAttempt == 300)
        rebooted.clock.advance(299)
        #expect(throws: KeychainError.errSecInteractionNotAllowed) { try rebooted.unlock("1234") }
        rebooted.clock.advance(1)
        try rebooted.unlock("1234")
    }

    @Test func tenFailuresEraseTheKeychainWhenThatIsTurnedOn() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        try keychain.setPasscode("1234")
        _ = try keychain.perform(
            .add(
                NewItem(itemClass: .genericPassword, attributes: ["acct": .string("a")], secret: SecretBytes(utf8: "x"))
            ))
        _ = try keychain.perform(.setEraseAfterFailedAttempts(true, passcode: SecretBytes(utf8: "1234")))
        for attempt in 1...10 {
            keychain.clock.advance(3601)
            fail(keychain, String(format: "%04d", attempt))
        }
        let status = try keychain.status()
        #expect(status.passcodeSet == false)
        #expect(status.failedAttempts == 0)
        #expect(throws: KeychainError.errSecItemNotFound) {
            try keychain.perform(.copyMatching(ItemQuery(itemClass: .genericPassword)))
        }
    }
}
