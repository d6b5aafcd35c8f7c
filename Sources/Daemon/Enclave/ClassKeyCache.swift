import Foundation
import KeychainProtocol
import Synchronization

/// Where unlocked class keys live between unlock and lock. Entries are sealed by a key derived
/// from the device secret before they get here, so the cache itself holds ciphertext only.
///
/// Implementations: ``ProcessClassKeyCache`` (this process's memory: the keychain locks when
/// the process ends, as a device locks when it restarts) and ``KernelKeyringClassKeyCache`` (the
/// user's kernel keyring: unlocked state shared by this user's processes until lock, logout or
/// reboot, never written to disk).
public protocol ClassKeyCache: Sendable {
    /// The entry named `name`, or nil.
    func load(_ name: String) -> Data?
    /// Stores or replaces an entry.
    func store(_ name: String, _ payload: Data)
    /// Removes an entry (a no-op when absent).
    func remove(_ name: String)
    /// True when the entries live in this process's memory alone. Only then does a lock keep
    /// the keys a matched touch unlocks with (``Enclave/unlock(touch:)``): kept where another
    /// process of the user could read them, they would make the lock a formality.
    var isPrivateToProcess: Bool { get }
}

/// Unlocked class keys held in this process's memory only, in locked pages left out of core
/// dumps (``SecretBytes``) and wiped when removed (on lock) or replaced.
public final class ProcessClassKeyCache: ClassKeyCache {
    private let entries = Mutex<[String: SecretBytes]>([:])

    /// Creates an empty cache (the keychain starts locked).
    public init() {}

    public func load(_ name: String) -> Data? { entries.withLock { $0[name] }?.copyData() }
    public func store(_ name: String, _ payload: Data) {
        let entry = SecretBytes(payload)
        entries.withLock { $0[name] = entry }
    }
    public func remove(_ name: String) { _ = entries.withLock { $0.removeValue(forKey: name) } }
    public var isPrivateToProcess: Bool { true }
}
