import Enclave
import Foundation
import GRDB
import Keychain
import KeychainEmbedded
import KeychainServer
import KeychainStore
import Synchronization

/// A boot clock the tests move by hand.
final class StubClock: EnclaveClock {
    private let state = Mutex<(boot: String, uptime: Double)>(("boot-1", 1000))

    var bootID: String { state.withLock { $0.boot } }
    func uptime() -> Double { state.withLock { $0.uptime } }

    func advance(_ seconds: Double) { state.withLock { $0.uptime += seconds } }
    func reboot() { state.withLock { $0 = ("boot-\(UUID().uuidString)", 5) } }
}

/// A fresh keychain in a temporary directory, with a fast passcode KDF and keys held in this
/// process, like `GRDBTestCase.makeDatabaseQueue()`.
struct TestKeychain {
    let directory: URL
    let clock: StubClock
    let cache: ProcessClassKeyCache
    let server: KeychainServer

    static let fastKDF: @Sendable () -> PasscodeKDF = { PasscodeKDF(logN: 10, blockSize: 8) }
    /// The floor lowered to what ``fastKDF`` makes; the real floor has tests of its own.
    static let fastLimits = PasscodeKDF.Limits(minimumLogN: 10, minimumBlockSize: 8, maximumMemory: 256 << 20)

    static func make() throws -> TestKeychain {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keychain-tests-\(UUID().uuidString)")
        return try open(directory, clock: StubClock(), cache: ProcessClassKeyCache())
    }

    static func open(_ directory: URL, clock: StubClock, cache: ProcessClassKeyCache) throws -> TestKeychain {
        let server = try KeychainServer(
            directory: directory, cache: cache, clock: clock, passcodeKDF: fastKDF, passcodeLimits: fastLimits)
        return TestKeychain(directory: directory, clock: clock, cache: cache, server: server)
    }

    /// The same files opened by a new process: unlocked keys are gone, as after a restart.
    func restarted() throws -> TestKeychain {
        try Self.open(directory, clock: clock, cache: ProcessClassKeyCache())
    }

    var databaseURL: URL { directory.appendingPathComponent("keychain.db") }

    /// Runs `sql` on the database as an attacker with write access would.
    func alterDatabase(_ sql: String) throws {
        try ReplayTests.attacker(databaseURL).write { try $0.execute(sql: sql) }
    }

    /// A caller in `groups` (default group first), whose sheets play the scripts of
    /// ``LAContext/scripted(_:)``.
    func transport(_ groups: [String] = ["com.example.app"]) -> EmbeddedTransport {
        EmbeddedTransport(server: server, caller: CallerIdentity(accessGroups: groups), prompts: ScriptedPrompts.shared)
    }

    /// Makes the SecItem functions and `Keychain` use this keychain.
    func install(_ groups: [String] = ["com.example.app"]) -> TestKeychain {
        ProcessKeychain.transport = transport(groups)
        return self
    }

    func perform(
        _ request: KeychainRequest, groups: [String] = ["com.example.app"], owner: Bool = false, connection: UInt64 = 0
    ) throws(KeychainError) -> KeychainReply {
        try server.handle(
            request, caller: CallerIdentity(accessGroups: groups, actsForOwner: owner, connection: connection))
    }

    func setPasscode(_ passcode: String) throws {
        _ = try perform(.setPasscode(current: nil, new: SecretBytes(utf8: passcode)))
    }

    func unlock(_ passcode: String) throws(KeychainError) {
        _ = try perform(.unlock(passcode: SecretBytes(utf8: passcode)))
    }

    func lock() throws {
        _ = try perform(.lock)
    }

    func status() throws -> DeviceStatus {
        guard case .status(let status) = try perform(.deviceStatus) else { throw KeychainError.errSecInternalComponent }
        return status
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Calls a SecItem function's result-pointer form and returns both parts.
func copyMatching(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    return (status, result)
}

/// The persistent reference of the generic password of `account`, or nil when none is found.
func persistentReference(account: String) -> Data? {
    copyMatching([
        kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account,
        kSecReturnPersistentRef as String: true,
    ]).1 as? Data
}

/// Adds a generic password with `secret`.
@discardableResult
func addPassword(
    service: String = "svc", account: String, secret: String = "s3cr3t", extra: [String: Any] = [:]
) -> OSStatus {
    var attributes: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
        kSecAttrAccount as String: account, kSecValueData as String: Data(secret.utf8),
    ]
    attributes.merge(extra) { _, new in new }
    return SecItemAdd(attributes as CFDictionary, nil)
}
