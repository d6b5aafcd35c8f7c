import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// Sync's keys and state in the Enclave (Docs/Sync.md): the device's identity key, made here as
/// an Enclave key of the group ``syncAccessGroup``, accessible after first unlock on this device
/// only, and the state a device keeps of its circle, sealed under a key derived from the device
/// secret.
extension Enclave {
    /// The access group of the sync identity key: no app's.
    public static let syncAccessGroup = "keychaind.sync"
    /// The file of sync's state in the keychain's directory.
    public static let syncStateFileName = "sync-state"
    private static let syncStateLabel = Data("swift-keychain sync state v1".utf8)
    /// The file that stands while a sync runs: found when keychaind starts, the sync before was
    /// cut off (a crash, a kill, a memory limit), and keychaind does not sync by itself until the
    /// owner asks (DESIGN.md, "Blast radius": a remote that crashes the daemon once must not
    /// crash it at every start).
    public static let syncRunningFileName = "sync-running"

    /// The file that stands while the circle's history is forked (``SyncState/fork``): what was
    /// found, which `keychainctl status` shows without opening the sync state.
    public static let syncForkFileName = "sync-fork"

    /// Marks the circle's history as forked, with what was found; nil takes the mark away.
    public func markSyncFork(_ found: String?) throws(KeychainError) {
        guard let found else {
            try files.remove(Self.syncForkFileName)
            return files.syncDirectory()
        }
        try files.writeAtomically(Data(found.prefix(4096).utf8), to: Self.syncForkFileName)
    }

    /// What was found when the circle's history forked, while it stands.
    public func syncFork() -> String? {
        guard let bytes = try? files.read(Self.syncForkFileName, maximumSize: 16_384) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Marks a sync as running, with when it began.
    public func beginSyncRun() throws(KeychainError) {
        try files.writeAtomically(Data(ISO8601DateFormatter().string(from: Date()).utf8), to: Self.syncRunningFileName)
    }

    /// Marks the running sync as ended, however it ended.
    public func endSyncRun() {
        try? files.remove(Self.syncRunningFileName)
        files.syncDirectory()
    }

    /// When a sync began that never ended, if one did.
    public func cutOffSyncRun() -> String? {
        guard let bytes = try? files.read(Self.syncRunningFileName, maximumSize: 64) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Makes this device's sync identity: an Enclave key of ``syncAccessGroup``. Returns its
    /// sealed form, which only this Enclave opens.
    public func makeSyncIdentity() throws(KeychainError) -> Data {
        try makeEnclaveKey(
            accessibility: .afterFirstUnlockThisDeviceOnly, accessControl: nil, accessGroup: Self.syncAccessGroup
        ).sealedKey
    }

    /// Opens the sync identity `sealed` for one sync.
    ///
    /// - Throws: `errSecDecode` for a key that is not this Enclave's sync identity;
    ///   `errSecInteractionNotAllowed` before the first unlock.
    public func openSyncKeys(identity sealed: Data) throws(KeychainError) -> SyncCircleKeys {
        let key = try SealedEnclaveKey(decoding: sealed)
        guard key.accessGroup == Self.syncAccessGroup, key.accessControl == nil else {
            throw KeychainError(.errSecDecode, "the sync identity is not the Enclave's sync key")
        }
        var raw = try openEnclaveKey(key)
        defer { raw.resetBytes(in: 0..<raw.count) }
        return try SyncCircleKeys(raw: raw)
    }

    private var syncStateKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: deviceKey, info: Self.syncStateLabel, outputByteCount: 32)
    }

    /// Sync's state, or nil when sync was never set up.
    ///
    /// - Throws: `errSecDecode` for a state file that does not open (altered, or another
    ///   device's).
    public func loadSyncState() throws(KeychainError) -> SyncState? {
        guard let sealed = try files.read(Self.syncStateFileName, maximumSize: SyncState.maximumSize) else {
            return nil
        }
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let opened = try? AES.GCM.open(box, using: syncStateKey, authenticating: Self.syncStateLabel),
            let state = try? SyncState.decode(opened)
        else {
            throw KeychainError(
                .errSecDecode, "the sync state file (\(Self.syncStateFileName)) was altered, or is another keychain's")
        }
        return state
    }

    /// Writes sync's state, atomically; nil removes it.
    public func saveSyncState(_ state: SyncState?) throws(KeychainError) {
        guard let state else {
            if files.exists(Self.syncStateFileName) { try files.remove(Self.syncStateFileName) }
            return
        }
        guard
            let sealed = try? AES.GCM.seal(state.encoded, using: syncStateKey, authenticating: Self.syncStateLabel)
                .combined
        else { throw KeychainError(.errSecInternalComponent, "sealing the sync state failed") }
        try files.writeAtomically(sealed, to: Self.syncStateFileName)
    }

    /// The keychain's directory, where sync keeps its clone of the remote.
    public var directoryURL: URL { files.url }
}
