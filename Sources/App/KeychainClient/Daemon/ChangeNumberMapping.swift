import CKeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// keychaind's change number of a keychain (``KeychainRequest/watchChanges``), mapped for
/// reading from the descriptor keychaind sent: it moves whenever something a search could see
/// may have changed. The memory is checked to be sealed as keychaind seals it (its size fixed,
/// writable by keychaind alone) before it is mapped.
final class ChangeNumberMapping: Sendable {
    private nonisolated(unsafe) let number: UnsafePointer<UInt64>

    /// Maps the number `descriptor` holds and closes the descriptor; nil when it holds none.
    init?(descriptor: Int32) {
        let number = kc_change_number_map(descriptor)
        close(descriptor)
        guard let number else { return nil }
        self.number = number
    }

    deinit { kc_change_number_unmap(number) }

    /// The number now.
    var value: UInt64 { kc_change_number_read(number) }
}
