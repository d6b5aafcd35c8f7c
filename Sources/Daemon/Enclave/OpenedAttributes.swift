import Foundation
import Synchronization

/// The attributes opened under one class key, kept so that reading an item again does not open
/// and decode its sealed attributes again: for each item, by its row id, the binding it was
/// opened with (row identity, version, class, accessibility, access-group tag, synchronizable
/// flag and access control), the sealed attributes it was opened from and what they decoded to.
///
/// Opening is a function of the key, the ciphertext and the associated data alone, and the
/// associated data is made from the binding: an entry is used only for the same key (it belongs
/// to the opened class key, ``ClassKeySet``), the same binding and the very same ciphertext,
/// byte for byte, so it answers exactly what opening would. A row whose sealed attributes or any
/// bound column changed is opened anew, and a tampered one fails as it always did. The one
/// exception is a query for persistent references alone, which reads no sealed column: it uses
/// an entry whose binding has the row's identity, version, class, accessibility and group tag
/// (``Enclave/openedAttributes(row:identity:version:itemClass:accessibility:accessGroupTag:)``),
/// and a row whose sealed attributes alone were replaced is listed until something opens it.
///
/// It goes with the class key: a lock, by this process or another, drops the key and this with
/// it; an unlock starts with none. What it holds while unlocked is the attributes (labels,
/// accounts, services: never a secret) of items read since (Docs/DataProtection.md).
final class OpenedAttributes: Sendable {
    /// At most this many items a class; past it, others are opened at each read, as before.
    static let limit = 20_000

    private struct Entry: Sendable {
        let binding: ItemBinding
        let sealed: Data
        /// What the caller's decoder made of the opened bytes (its own type, checked when used).
        let decoded: any Sendable
    }

    /// By row id, the cheap key (hashing a binding cost more than the rest of a look-up); each
    /// entry names the binding and bytes it belongs to, which the row must still have.
    private let entries = Mutex<[Int64: Entry]>([:])

    /// What `sealed`, bound to `binding`, decoded to when row `row` was opened with them, if it
    /// was.
    func decoded<Decoded>(_ row: Int64, _ sealed: Data, _ binding: ItemBinding) -> Decoded? {
        guard let entry = entries.withLock({ $0[row] }), entry.binding == binding, entry.sealed == sealed else {
            return nil
        }
        return entry.decoded as? Decoded
    }

    /// What row `row` decoded to when it was opened, with the binding it was opened with, if
    /// `isStill` says that binding is still the row's (by the columns the caller read).
    func decoded<Decoded>(_ row: Int64, isStill: (ItemBinding) -> Bool) -> (binding: ItemBinding, decoded: Decoded)? {
        guard let entry = entries.withLock({ $0[row] }), isStill(entry.binding),
            let decoded = entry.decoded as? Decoded
        else { return nil }
        return (entry.binding, decoded)
    }

    /// Keeps what `sealed`, bound to `binding`, decoded to, for row `row`.
    func remember(_ decoded: some Sendable, _ row: Int64, _ sealed: Data, _ binding: ItemBinding) {
        entries.withLock { entries in
            guard entries.count < Self.limit || entries[row] != nil else { return }
            entries[row] = Entry(binding: binding, sealed: sealed, decoded: decoded)
        }
    }

    /// How many items are kept.
    var count: Int { entries.withLock { $0.count } }
}
