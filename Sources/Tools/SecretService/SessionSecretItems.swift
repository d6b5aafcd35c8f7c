import Foundation
import KeychainProtocol

/// The `session` collection: items kept in the bridge's memory only, gone when it exits (as
/// gnome-keyring's are), never written to disk.
///
/// Each app sees its own here too: an item belongs to the app keychaind decided the client that
/// made it is (``owner``, from its answer to ``KeychainRequest/actForProcess(_:)``), by the same
/// rules as its items on disk: in the system daemon a registered app, a path, or `untrusted:`
/// and a path (an `LD_PRELOAD`ed copy of a trusted program is not that program). A client
/// keychaind would not identify keeps items apart from every identified app.
final class SessionSecretItems: SecretItemStore {
    /// Every app's session items, shared by the views of one bridge; used on its one thread.
    final class Contents {
        fileprivate var items: [String: [String: (item: SecretItem, secret: SecretValue)]] = [:]
    }

    static let name = "session"
    private let contents: Contents
    private let owner: String

    /// The view of `owner`, the app keychaind decided the client is.
    init(contents: Contents, owner: String) {
        self.contents = contents
        self.owner = owner
    }

    private var own: [String: (item: SecretItem, secret: SecretValue)] {
        get { contents.items[owner] ?? [:] }
        set { contents.items[owner] = newValue }
    }

    func items(in collection: String?, matching attributes: [String: String]) throws(KeychainError) -> [SecretItem] {
        guard collection == nil || collection == Self.name else { return [] }
        return own.values.map(\.item).filter { item in attributes.allSatisfy { item.attributes[$0.key] == $0.value } }
            .sorted { $0.id < $1.id }
    }

    func item(_ id: String, in collection: String) throws(KeychainError) -> SecretItem {
        guard collection == Self.name, let entry = own[id] else {
            throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)")
        }
        return entry.item
    }

    func secret(of id: String, in collection: String) throws(KeychainError) -> SecretValue {
        guard collection == Self.name, let entry = own[id] else {
            throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)")
        }
        return entry.secret
    }

    func create(
        in collection: String, label: String, attributes: [String: String], secret: SecretValue, replacing: Bool
    ) throws(KeychainError) -> SecretItem {
        let now = UInt64(Date().timeIntervalSince1970)
        if replacing, let existing = own.values.first(where: { $0.item.attributes == attributes }) {
            var item = existing.item
            item.label = label
            item.modified = now
            own[item.id] = (item, secret)
            return item
        }
        let id = SecretItem.newID()
        let item = SecretItem(
            id: id, collection: Self.name, label: label, attributes: attributes, created: now, modified: now)
        own[id] = (item, secret)
        return item
    }

    func update(
        _ id: String, in collection: String, label: String?, attributes: [String: String]?, secret: SecretValue?
    ) throws(KeychainError) {
        guard collection == Self.name, var entry = own[id] else {
            throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)")
        }
        if let label { entry.item.label = label }
        if let attributes { entry.item.attributes = attributes }
        if let secret { entry.secret = secret }
        entry.item.modified = UInt64(Date().timeIntervalSince1970)
        own[id] = entry
    }

    func delete(_ id: String, in collection: String) throws(KeychainError) {
        guard collection == Self.name, own.removeValue(forKey: id) != nil else {
            throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)")
        }
    }
}
