#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation

/// Unlocked class keys held in the calling user's kernel keyring (`@u`), so that an unlock by
/// one process (`keychainctl unlock`) serves the user's later processes until `lock`, logout or
/// reboot, as the device's unlock does on iOS. The kernel keeps the entries in its own memory;
/// they never reach the disk, and a reboot clears them, after which the passcode is needed again.
///
/// Entries are restricted to their owner. Other processes of the same user can read them; in
/// embedded mode that user is trusted anyway (README, Security model).
public struct KernelKeyringClassKeyCache: ClassKeyCache {
    /// Creates the cache, or returns nil when this kernel refuses keyring calls (for example
    /// under a seccomp filter); callers then fall back to ``ProcessClassKeyCache``.
    public init?() {
        let probe = "swift-keychain:probe"
        let serial = kc_user_keyring_add(probe, "x", 1)
        guard serial >= 0 else { return nil }
        _ = kc_keyring_invalidate(serial)
    }

    public func load(_ name: String) -> Data? {
        let serial = kc_user_keyring_search(name)
        guard serial >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = kc_keyring_read(serial, &buffer, buffer.count)
        guard length > 0, length <= buffer.count else { return nil }
        defer { for i in buffer.indices { buffer[i] = 0 } }
        return Data(buffer[0..<length])
    }

    public func store(_ name: String, _ payload: Data) {
        let serial = payload.withUnsafeBytes { kc_user_keyring_add(name, $0.baseAddress, $0.count) }
        if serial >= 0 { _ = kc_keyring_restrict_to_owner(serial) }
    }

    public func remove(_ name: String) {
        // Several entries could carry one name after races; invalidate until none is left.
        for _ in 0..<8 {
            let serial = kc_user_keyring_search(name)
            guard serial >= 0 else { return }
            _ = kc_keyring_invalidate(serial)
        }
    }
}
