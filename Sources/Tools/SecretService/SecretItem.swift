import Foundation
import KeychainProtocol

/// One Secret Service item (`org.freedesktop.Secret.Item`), without its secret.
struct SecretItem: Sendable, Equatable {
    /// Its path element in its collection: 32 hexadecimal digits, drawn when it was made and
    /// kept for its life.
    var id: String
    /// The collection's name (`login` for the default one).
    var collection: String
    var label: String
    /// Its attributes, matched exactly (case and all) by searches.
    var attributes: [String: String]
    /// Seconds since 1970.
    var created: UInt64
    var modified: UInt64
}

extension SecretItem {
    /// A new item's id: a random UUID's 32 hexadecimal digits (no hyphens: path elements are
    /// `[A-Za-z0-9_]`).
    static func newID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

/// An item a search found, as a client sees it: its path, whether the client may read it, its
/// own or another app's the owner let it read (if not, it is listed as locked), and its label
/// and content type when keychaind sent them (``KeychainProtocol/SecretItemMatch/label``,
/// ``KeychainProtocol/SecretItemMatch/contentType``).
struct SearchMatch: Sendable {
    var id: String
    var collection: String
    var readable: Bool
    var label: String?
    var contentType: String?
}

/// An item's secret and what it is (`text/plain; charset=utf8`).
struct SecretValue: Sendable {
    var bytes: SecretBytes
    var contentType: String
}

/// A collection (`org.freedesktop.Secret.Collection`) as its client sees it.
struct SecretCollection: Sendable, Equatable {
    /// Its path element.
    var name: String
    var label: String
    var created: UInt64
    var modified: UInt64
}

/// What the Secret Service keeps items in, for one client (``KeychainSecretItems`` for the
/// collections on disk, ``SessionSecretItems`` for `session`, in memory).
protocol SecretItemStore: AnyObject {
    /// The items of `collection` (every collection: nil) with all of `attributes`.
    func items(in collection: String?, matching attributes: [String: String]) throws(KeychainError) -> [SecretItem]
    /// The item `id` of `collection`; `errSecItemNotFound` when the client has none.
    func item(_ id: String, in collection: String) throws(KeychainError) -> SecretItem
    /// Item `id`'s secret.
    func secret(of id: String, in collection: String) throws(KeychainError) -> SecretValue
    /// Adds an item; with `replacing`, an item of the collection with the same attributes
    /// takes the new label and secret instead (and keeps its path).
    func create(
        in collection: String, label: String, attributes: [String: String], secret: SecretValue, replacing: Bool
    ) throws(KeychainError) -> SecretItem
    /// Changes what is given of item `id`.
    func update(
        _ id: String, in collection: String, label: String?, attributes: [String: String]?, secret: SecretValue?
    ) throws(KeychainError)
    /// Deletes item `id`.
    func delete(_ id: String, in collection: String) throws(KeychainError)
}
