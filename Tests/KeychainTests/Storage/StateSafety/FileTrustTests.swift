import Enclave
import Foundation
import Keychain
import KeychainServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The keychain trusts no file it did not write: a directory or file another user could plant or
/// swap, or a symbolic link, is refused with errSecInvalidKeychain before anything is read from
/// it, and temporary files are never written through a planted name (issue: "Trust no file you
/// did not write").
@Suite struct FileTrustTests {
    /// A user who is not us (nobody), for planting files as another user would. The tests that
    /// plant need root, as CI has; the others run as anyone.
    static let otherUser: uid_t = 65534
    static var isRoot: Bool { getuid() == 0 }

    func temporaryDirectory(mode: Int = 0o700) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("file-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: mode])
        return url
    }

    func expectRefused(_ directory: URL, mentioning words: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try TestKeychain.open(directory, clock: StubClock(), cache: .init())
            Issue.record("the keychain opened", sourceLocation: sourceLocation)
        } catch let error as KeychainError {
            #expect(error.status == errSecInvalidKeychain, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(words), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record(error, sourceLocation: sourceLocation)
        }
    }

    @Test(.enabled(if: isRoot)) func aKeychainPlantedByAnotherUserIsNotAdopted() throws {
        // XDG_DATA_HOME under a directory another user can write: they plant a keychain of their
        // own (mode 0666) where the victim's will be.
        let shared = try temporaryDirectory(mode: 0o700)
        defer { try? FileManager.default.removeItem(at: shared) }
        let planted = try TestKeychain.open(
            shared.appendingPathComponent("keychain"), clock: StubClock(), cache: .init())
        _ = planted
        for name in try FileManager.default.contentsOfDirectory(atPath: planted.directory.path) {
            chown(planted.directory.appendingPathComponent(name).path, Self.otherUser, Self.otherUser)
            chmod(planted.directory.appendingPathComponent(name).path, 0o666)
        }
        chown(planted.directory.path, Self.otherUser, Self.otherUser)
        chmod(shared.path, 0o777)
        expectRefused(planted.directory, mentioning: "other users")
        // Even in a parent nobody else can write, a directory or file of another user is refused.
        chmod(shared.path, 0o755)
        expectRefused(planted.directory, mentioning: "another user")
        chown(planted.directory.path, getuid(), getgid())
        chmod(planted.directory.path, 0o700)
        expectRefused(planted.directory, mentioning: "belongs to another user")
    }

    @Test func aParentOthersCanWriteWithoutTheStickyBitIsRefused() throws {
        let shared = try temporaryDirectory(mode: 0o700)
        defer { try? FileManager.default.removeItem(at: shared) }
        chmod(shared.path, 0o777)
        expectRefused(shared.appendingPathComponent("keychain"), mentioning: "can be written by other users")
        #expect(
            !FileManager.default.fileExists(atPath: shared.appendingPathComponent("keychain").path),
            "nothing was created")
        // /tmp is writable by all but sticky: only an entry's owner may rename it, so it is safe.
        chmod(shared.path, 0o1777)
        let keychain = try TestKeychain.open(
            shared.appendingPathComponent("keychain"), clock: StubClock(), cache: .init())
        _ = keychain
    }

    @Test func aKeychainDirectoryOrFileOthersCanWriteIsRefused() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        chmod(keychain.directory.path, 0o777)
        expectRefused(keychain.directory, mentioning: "can be written by other users")
        chmod(keychain.directory.path, 0o755)
        let reopened = try keychain.restarted()
        _ = reopened
        var info = stat()
        stat(keychain.directory.path, &info)
        #expect(info.st_mode & 0o777 == 0o700, "a directory others can only read is made private")
        chmod(keychain.directory.appendingPathComponent("keybag").path, 0o666)
        expectRefused(keychain.directory, mentioning: "can be written by other users")
    }

    @Test func aSymbolicLinkInsteadOfAFileIsRefusedAndNotFollowed() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let victim = try temporaryDirectory().appendingPathComponent("victim")
        defer { try? FileManager.default.removeItem(at: victim.deletingLastPathComponent()) }
        try Data("the victim's file".utf8).write(to: victim)
        let keybag = keychain.directory.appendingPathComponent("keybag")
        try FileManager.default.removeItem(at: keybag)
        try FileManager.default.createSymbolicLink(at: keybag, withDestinationURL: victim)
        expectRefused(keychain.directory, mentioning: "symbolic link")
        #expect(try Data(contentsOf: victim) == Data("the victim's file".utf8))
    }

    @Test func aPlantedLinkAtThePredictableTemporaryNameIsNotWrittenThrough() throws {
        // The old code wrote `.device-secret.<pid>.tmp` without O_EXCL/O_NOFOLLOW: a link
        // planted there made the keychain overwrite the file it pointed to.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = directory.deletingLastPathComponent().appendingPathComponent("victim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: victim) }
        try Data("the victim's file".utf8).write(to: victim)
        for name in ["device-secret", "keybag", "attempts"] {
            try FileManager.default.createSymbolicLink(
                at: directory.appendingPathComponent(".\(name).\(getpid()).tmp"), withDestinationURL: victim)
        }
        let keychain = try TestKeychain.open(directory, clock: StubClock(), cache: .init())
        try keychain.setPasscode("1234")
        #expect(try Data(contentsOf: victim) == Data("the victim's file".utf8))
    }

    @Test func leftoverTemporariesAreRemovedAtOpen() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let leftover = keychain.directory.appendingPathComponent(".keybag.4242.tmp")
        try Data("class keys wrapped under a passcode that was never set".utf8).write(to: leftover)
        chmod(leftover.path, 0o600)
        _ = try keychain.restarted()
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }

    @Test func aHeldEnclaveLockMakesOthersFailWithKeychainBusyInsteadOfHanging() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let fd = open(keychain.directory.appendingPathComponent("enclave.lock").path, O_RDWR | O_CLOEXEC)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let start = Date()
        do {
            _ = try KeychainServer(
                directory: keychain.directory, cache: ProcessClassKeyCache(), passcodeKDF: TestKeychain.fastKDF,
                passcodeLimits: TestKeychain.fastLimits, lockTimeout: 0.3)
            Issue.record("opened while another process held the lock")
        } catch {
            #expect(error.status == errSecIO)
            #expect(error.message.contains("keychain busy"), "\(error.message)")
        }
        #expect(Date().timeIntervalSince(start) < 5)
    }
}
