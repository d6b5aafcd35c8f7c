import CKeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// A number that moves whenever one user's keychain may have changed in a way a search could
/// see (an item written, the keychain locked or unlocked, a grant given or taken, a sync), so
/// that the Secret Service bridge can keep a search's answer while it stands still and know it
/// without asking (``KeychainRequest/watchChanges``).
///
/// It lives in eight bytes of memory with no name, which keychaind maps for writing and the
/// bridge, given a descriptor, for reading: sealed so that their size never changes and that no
/// mapping made after keychaind's own can write them. The number says only that something may
/// have changed, and when: nothing of what changed.
final class ChangeNumber: Sendable {
    /// The memory's descriptor, sent to a bridge that asks.
    let descriptor: Int32
    private nonisolated(unsafe) let number: UnsafeMutablePointer<UInt64>

    /// A number at zero; nil when the kernel gives no sealed memory (the bridge then keeps no
    /// answer: it is told so when it asks).
    init?() {
        var number: UnsafeMutablePointer<UInt64>?
        let descriptor = kc_change_number_create(&number)
        guard descriptor >= 0, let number else { return nil }
        self.descriptor = descriptor
        self.number = number
    }

    /// Moves the number: whatever a reader kept before is stale.
    func advance() {
        kc_change_number_advance(number)
    }
}
