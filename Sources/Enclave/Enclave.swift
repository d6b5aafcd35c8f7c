#if canImport(Glibc)
import Glibc
#endif
import Crypto
import Foundation
import KeychainProtocol
import Synchronization

/// The only code that touches key material: the device secret, the passcode, the keybag and its
/// class keys, the lock state, the attempt counter, and the sealing and opening of items.
///
/// Its interface is message-shaped (seal this item, open this item's secret, unlock with this
/// passcode) so that it can move into its own process or onto a TPM without changing callers.
/// Nothing it returns is a key.
///
/// Files, under the keychain directory (mode 0700): `device-secret` (mode 0600, 32 random bytes),
/// `keybag` (wrapped class keys and passcode parameters), `attempts` (the failed-attempt
/// counter) and `enclave.lock` (serialises processes).
public final class Enclave: Sendable {
    /// The keychain directory.
    public let directory: URL
    let deviceKey: SymmetricKey
    let clock: any EnclaveClock
    let cache: any ClassKeyCache
    let makePasscodeKDF: @Sendable () -> PasscodeKDF
    private let keybagCache = Mutex<(stamp: FileStamp, keybag: Keybag)?>(nil)

    var keybagURL: URL { directory.appendingPathComponent("keybag") }
    var attemptsURL: URL { directory.appendingPathComponent("attempts") }
    var lockURL: URL { directory.appendingPathComponent("enclave.lock") }

    /// Opens the enclave whose state lives in `directory`, creating the device secret and a
    /// keybag without passcode when the directory is new.
    ///
    /// - Parameters:
    ///   - directory: the keychain directory, created with mode 0700.
    ///   - clock: the boot clock that times passcode delays.
    ///   - cache: where unlocked class keys live between unlock and lock.
    ///   - passcodeKDF: makes the KDF parameters for a new passcode; by default calibrated to
    ///     about 100 ms on this machine.
    /// - Throws: `errSecIO` when the directory cannot be used, `errSecNotAvailable` when the
    ///   device secret of an existing keychain is missing, `errSecDecode` for a damaged keybag.
    public init(
        directory: URL, clock: any EnclaveClock = SystemEnclaveClock(), cache: any ClassKeyCache,
        passcodeKDF: @escaping @Sendable () -> PasscodeKDF = { PasscodeKDF.calibrated() }
    ) throws(KeychainError) {
        self.directory = directory
        self.clock = clock
        self.cache = cache
        self.makePasscodeKDF = passcodeKDF
        try EnclaveFiles.prepareDirectory(directory)
        let keybagURL = directory.appendingPathComponent("keybag")
        let secretURL = directory.appendingPathComponent("device-secret")
        self.deviceKey = try EnclaveFiles.withExclusiveLock(directory.appendingPathComponent("enclave.lock")) { () throws(KeychainError) in
            let keybagExists = FileManager.default.fileExists(atPath: keybagURL.path)
            let deviceKey = try DeviceSecret.load(from: secretURL, keybagExists: keybagExists)
            if !keybagExists {
                try Keybag.fresh(deviceKey: deviceKey).0.save(keybagURL)
            }
            return deviceKey
        }
    }

    /// The identity of the current keybag; it changes when the keychain is erased.
    public func keychainID() throws(KeychainError) -> String {
        try keybag().keychainID
    }

    // MARK: Keybag access

    func keybag() throws(KeychainError) -> Keybag {
        let stamp = FileStamp(keybagURL)
        if let stamp, let cached = keybagCache.withLock({ $0 }), cached.stamp == stamp {
            return cached.keybag
        }
        guard let keybag = try Keybag.load(keybagURL) else {
            throw KeychainError(.errSecNotAvailable, "the keybag \(keybagURL.path) is missing; the keychain cannot be opened")
        }
        if let stamp { keybagCache.withLock { $0 = (stamp, keybag) } }
        return keybag
    }

    func save(_ keybag: Keybag) throws(KeychainError) {
        try keybag.save(keybagURL)
        keybagCache.withLock { $0 = nil }
    }

    func cacheName(_ protectionClass: ProtectionClass, _ keybag: Keybag) -> String {
        "swift-keychain:\(keybag.keychainID):\(protectionClass.rawValue)"
    }

    private func cacheSealingKey(_ keybag: Keybag) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, salt: Data(keybag.keychainID.utf8),
            info: Data("swift-keychain class-key-cache v1".utf8), outputByteCount: 32)
    }

    /// Puts unlocked class keys in the cache, sealed by a device-derived key (AAD: the entry's
    /// name, so entries cannot be swapped between classes).
    func cacheClassKeys(_ keys: [ProtectionClass: SymmetricKey], _ keybag: Keybag) {
        let sealingKey = cacheSealingKey(keybag)
        for (protectionClass, key) in keys {
            let name = cacheName(protectionClass, keybag)
            let sealed = key.withUnsafeBytes { try? AES.GCM.seal($0, using: sealingKey, authenticating: Data(name.utf8)).combined }
            if let sealed { cache.store(name, sealed) }
        }
    }

    /// The key of `protectionClass` if it is available now.
    ///
    /// - Throws: `errSecInteractionNotAllowed` when the class is locked, `errSecNotAvailable`
    ///   for WhenPasscodeSet with no passcode set.
    func classKey(_ protectionClass: ProtectionClass) throws(KeychainError) -> SymmetricKey {
        let keybag = try keybag()
        if protectionClass == .whenPasscodeSet && keybag.passcode == nil {
            throw KeychainError(.errSecNotAvailable, "no device passcode is set, so items accessible WhenPasscodeSetThisDeviceOnly cannot exist; set one with `keychainctl passcode set`")
        }
        if keybag.passcode == nil {
            // No passcode: class keys are wrapped by the device secret alone and always available.
            if let key = keybag.unwrap(protectionClass, with: keybag.deviceWrappingKey(deviceKey, for: protectionClass)) {
                return key
            }
            throw KeychainError(.errSecDecode, "the keybag entry for the \(protectionClass) class does not open with this device secret; the keybag or device secret was replaced")
        }
        let name = cacheName(protectionClass, keybag)
        if let sealed = cache.load(name), let box = try? AES.GCM.SealedBox(combined: sealed),
            var bytes = try? AES.GCM.open(box, using: cacheSealingKey(keybag), authenticating: Data(name.utf8))
        {
            defer { bytes.resetBytes(in: 0..<bytes.count) }
            return SymmetricKey(data: bytes)
        }
        switch protectionClass {
        case .afterFirstUnlock:
            throw KeychainError(.errSecInteractionNotAllowed, "the keychain has not been unlocked since the machine started; unlock it with `keychainctl unlock`")
        case .whenUnlocked, .whenPasscodeSet:
            throw KeychainError(.errSecInteractionNotAllowed, "the keychain is locked; unlock it with `keychainctl unlock`")
        }
    }
}

/// Identifies one version of a file (inode, size, modification time): the keybag is reread
/// only when it changed.
struct FileStamp: Equatable, Sendable {
    let inode: UInt64
    let size: Int64
    let modified: Int64
    let modifiedNanoseconds: Int64

    init?(_ url: URL) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    }
}
