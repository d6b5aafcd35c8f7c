import Foundation
import KeychainClient
import KeychainProtocol

/// The collections a client sees: `login` (the default, on disk; the aliases `default` and
/// `login` name it), `session` (in memory), and those the client's app made with
/// `CreateCollection`, each kept as a keychain item of that app (a generic password with
/// `svce` `secret-service collection`, `acct` its name, `labl` its label and `desc` the alias
/// it was made under, if any). Like its items, an app's collections are its own.
struct SecretCollections {
    static let recordService = "secret-service collection"
    let transport: any KeychainTransport
    /// The records the bridge keeps across clients of one app; nil: asked each time.
    let keptRecords: KeptCollectionRecords?

    /// Every collection the client sees.
    func all() throws(KeychainError) -> [SecretCollection] {
        let made = try records().map(\.collection)
        let builtIn = [(SecretObjectPath.defaultCollection, "Login"), (SessionSecretItems.name, "Session")].map {
            name, label in
            made.first { $0.name == name } ?? SecretCollection(name: name, label: label, created: 0, modified: 0)
        }
        return builtIn + made.filter { !Self.isBuiltIn($0.name) }
    }

    /// True for `login` and `session`, which every client has.
    static func isBuiltIn(_ name: String) -> Bool {
        name == SecretObjectPath.defaultCollection || name == SessionSecretItems.name
    }

    /// `errSecItemNotFound` unless the client has collection `name`: a built-in one it always
    /// has, without asking keychaind; one it made, by its record.
    func requireExists(_ name: String) throws(KeychainError) {
        if !Self.isBuiltIn(name) { _ = try collection(name) }
    }

    /// Collection `name`, or `errSecItemNotFound`.
    func collection(_ name: String) throws(KeychainError) -> SecretCollection {
        guard let collection = try all().first(where: { $0.name == name }) else {
            throw KeychainError(.errSecItemNotFound, "no collection \(name)")
        }
        return collection
    }

    /// The collection alias `name` stands for; nil when none.
    func resolve(alias name: String) throws(KeychainError) -> String? {
        if let builtIn = SecretObjectPath.collection(ofAlias: name) { return builtIn }
        return try records().first { $0.alias == name }?.collection.name
    }

    /// `CreateCollection`: the collection under `alias` when there is one, else a new one.
    func create(label: String, alias: String) throws(KeychainError) -> String {
        if !alias.isEmpty, let existing = try resolve(alias: alias) { return existing }
        let name = try freeName(for: label)
        try addRecord(name, label: label, alias: alias)
        return name
    }

    private func addRecord(_ name: String, label: String, alias: String) throws(KeychainError) {
        var attributes: [String: AttributeValue] = [
            "svce": .string(Self.recordService), "acct": .string(name), "labl": .string(label),
        ]
        if !alias.isEmpty { attributes["desc"] = .string(alias) }
        _ = try transport.perform(
            .add(NewItem(itemClass: .genericPassword, attributes: attributes, accessibility: .whenUnlocked)))
    }

    /// `SetAlias`: `alias` names `collection` from now on (`/` removes it). The aliases of
    /// the two built-in collections stay theirs.
    func setAlias(_ alias: String, to collection: String?) throws(KeychainError) {
        guard SecretObjectPath.collection(ofAlias: alias) == nil else {
            throw KeychainError(
                .errSecParam,
                "the alias \(alias) always names the collection \(SecretObjectPath.collection(ofAlias: alias)!)")
        }
        for record in try records() where record.alias == alias {
            try update(record.collection.name, ["desc": .string("")])
        }
        if let collection {
            guard try records().contains(where: { $0.collection.name == collection }) else {
                throw KeychainError(.errSecParam, "only a collection made with CreateCollection takes an alias")
            }
            try update(collection, ["desc": .string(alias)])
        }
    }

    /// `Label`: a built-in collection gets a record of this app's for its label the first time.
    func setLabel(_ label: String, of collection: String) throws(KeychainError) {
        if Self.isBuiltIn(collection), try !records().contains(where: { $0.collection.name == collection }) {
            try addRecord(collection, label: label, alias: "")
            return
        }
        try update(collection, ["labl": .string(label)])
    }

    /// Deletes a made collection's record (its items are deleted by the caller).
    func deleteRecord(of collection: String) throws(KeychainError) {
        _ = try transport.perform(.delete(query(collection)))
    }

    private func update(_ collection: String, _ attributes: [String: AttributeValue]) throws(KeychainError) {
        _ = try transport.perform(.update(query(collection), ItemChanges(attributes: attributes)))
    }

    private func query(_ collection: String) -> ItemQuery {
        ItemQuery(
            itemClass: .genericPassword,
            attributes: ["svce": .string(Self.recordService), "acct": .string(collection)])
    }

    /// A path element for a new collection: its label's letters and digits, made unique.
    private func freeName(for label: String) throws(KeychainError) -> String {
        let letters = String(
            label.lowercased().unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0)) })
        let base = letters.isEmpty ? "collection" : String(letters.prefix(32))
        let taken = Set(try all().map(\.name))
        var name = base
        var number = 1
        while taken.contains(name) {
            number += 1
            name = "\(base)\(number)"
        }
        return name
    }

    /// A collection the client's app made, as its record says.
    struct Record {
        var collection: SecretCollection
        var alias: String?
    }

    /// The records of the client's app: those the bridge keeps for it, when it keeps them
    /// (``KeptCollectionRecords``), else keychaind's.
    private func records() throws(KeychainError) -> [Record] {
        guard let keptRecords, let app = (transport as? DaemonTransport).flatMap({ try? $0.appActedFor() }) else {
            return try recordsInKeychain()
        }
        return try keptRecords.records(of: app) { () throws(KeychainError) in try recordsInKeychain() }
    }

    private func recordsInKeychain() throws(KeychainError) -> [Record] {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string(Self.recordService)], limit: .all,
            returns: .attributes)
        let reply: KeychainReply
        do throws(KeychainError) {
            reply = try transport.perform(.copyMatching(query))
        } catch  where error.status == KeychainError.errSecItemNotFound.status {
            return []
        }
        guard case .items(let results) = reply else { return [] }
        return results.compactMap { result in
            guard let attributes = result.attributes, case .string(let name)? = attributes["acct"] else { return nil }
            let label: String = if case .string(let text)? = attributes["labl"] { text } else { "" }
            let alias: String? = if case .string(let text)? = attributes["desc"], !text.isEmpty { text } else { nil }
            return Record(
                collection: SecretCollection(
                    name: name, label: label,
                    created: KeychainSecretItems.seconds(attributes[CommonAttribute.creationDate]),
                    modified: KeychainSecretItems.seconds(attributes[CommonAttribute.modificationDate])),
                alias: alias)
        }
    }
}
