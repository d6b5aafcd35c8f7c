import CKeychainSupport
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Unlocked class keys held in the calling user's kernel keyring (`@u`), so that an unlock by
/// one process (`keychainctl unlock`) serves the user's later processes until `lock`, logout or
/// reboot, as the device's unlock does on iOS. The kernel keeps the entries in its own memory;
/// they never reach the disk, and a reboot clears them, after which the passcode is needed again.
///
/// Entries are restricted to their owner. Other processes of the same user can read them; in
/// embedded mode that user is trusted anyway (Docs/SecurityModel.md).
public struct KernelKeyringClassKeyCache: ClassKeyCache {
    /// The serial each entry was last found or stored under, so that a load is one read, not a
    /// search and a read. A lock invalidates the entry (``remove(_:)``, in whichever process),
    /// after which reading its serial fails and the entry is searched for again; what is read is
    /// compared with what was remembered and opened under the entry's name, so a serial that
    /// came to name another key could never stand in for this one.
    private let serials = KnownSerials()

    /// Creates the cache, or returns nil when this kernel refuses keyring calls (for example
    /// under a seccomp filter); callers then fall back to ``ProcessClassKeyCache``.
    public init?() {
        let probe = "swift-keychain:probe"
        let serial = kc_user_keyring_add(probe, "x", 1)
        guard serial >= 0 else { return nil }
        _ = kc_keyring_invalidate(serial)
    }

    /// Every process of the user can read the user's keyring.
    public var isPrivateToProcess: Bool { false }

    public func load(_ name: String) -> Data? {
        if let serial = serials.known.withLock({ $0[name] }), let payload = read(serial) { return payload }
        let serial = kc_user_keyring_search(name)
        guard serial >= 0, let payload = read(serial) else {
            serials.known.withLock { _ = $0.removeValue(forKey: name) }
            return nil
        }
        serials.known.withLock { $0[name] = serial }
        return payload
    }

    public func store(_ name: String, _ payload: Data) {
        let serial = payload.withUnsafeBytes { kc_user_keyring_add(name, $0.baseAddress, $0.count) }
        guard serial >= 0 else { return }
        _ = kc_keyring_restrict_to_owner(serial)
        serials.known.withLock { $0[name] = serial }
    }

    public func remove(_ name: String) {
        serials.known.withLock { _ = $0.removeValue(forKey: name) }
        // Several entries could carry one name after races; invalidate until none is left.
        for _ in 0..<8 {
            let serial = kc_user_keyring_search(name)
            guard serial >= 0 else { return }
            _ = kc_keyring_invalidate(serial)
        }
    }

    /// The entry `serial` names, or nil when it is gone (invalidated by a lock, or never there).
    private func read(_ serial: Int32) -> Data? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = kc_keyring_read(serial, &buffer, buffer.count)
        defer { for i in buffer.indices { buffer[i] = 0 } }
        guard length > 0, length <= buffer.count else { return nil }
        return Data(buffer[0..<length])
    }

    private final class KnownSerials: Sendable {
        let known = Mutex<[String: Int32]>([:])
    }
}
