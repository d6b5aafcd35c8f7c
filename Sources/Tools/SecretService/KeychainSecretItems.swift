import Foundation
import KeychainClient
import KeychainProtocol

/// The Secret Service's items of one D-Bus client, kept as keychain items of that client's app:
/// generic passwords in its own access group, asked for through a transport that acts for the
/// client (``KeychainRequest/actForProcess(_:)``), so keychaind decides what the client may see.
///
/// An item is a generic password with:
/// - `svce` `secret-service:` and its collection's name, and `acct` its id (so the pair, the
///   class's primary key, is unique and stays the item's for its life);
/// - `labl` its label, `gena` its secret's content type;
/// - each Secret Service attribute as `ss:` and its name (``ItemClass/secretServiceAttributePrefix``),
///   sealed with the others and found by keyed hash, never in clear on disk;
/// - the accessibility `WhenUnlocked`: a locked keychain is a locked collection.
final class KeychainSecretItems: SecretItemStore {
    /// What every Secret Service item's `svce` begins with.
    static let servicePrefix = SecretServiceItemGrant.servicePrefix
    private static let contentTypeAttribute = ItemClass.secretServiceContentTypeAttribute
    private let transport: any KeychainTransport
    /// The latest search, while it may answer the next.
    private var kept: KeptSearch?
    /// False once keychaind refused ``KeychainRequest/searchSecretItemsWithContentTypes(_:)``: it
    /// is of an earlier build (a keychaind running through an upgrade), and searches ask
    /// ``KeychainRequest/searchSecretItems(_:)``.
    private var searchesWithContentTypes = true

    init(transport: any KeychainTransport) {
        self.transport = transport
    }

    func items(in collection: String?, matching attributes: [String: String]) throws(KeychainError) -> [SecretItem] {
        var query = ItemQuery(itemClass: .genericPassword, limit: .all, returns: .attributes)
        for (name, value) in attributes {
            query.attributes[ItemClass.secretServiceAttributePrefix + name] = .string(value)
        }
        if let collection { query.attributes["svce"] = .string(Self.servicePrefix + collection) }
        let reply: KeychainReply
        do throws(KeychainError) {
            reply = try transport.perform(.copyMatching(query))
        } catch  where error.status == KeychainError.errSecItemNotFound.status {
            return []
        }
        guard case .items(let results) = reply else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a search out of turn")
        }
        return results.compactMap { $0.attributes.flatMap(Self.item(from:)) }
    }

    func item(_ id: String, in collection: String) throws(KeychainError) -> SecretItem {
        guard case .items(let results) = try transport.perform(.copyMatching(query(id, in: collection, .attributes))),
            let item = results.first?.attributes.flatMap(Self.item(from:))
        else { throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)") }
        return item
    }

    func secret(of id: String, in collection: String) throws(KeychainError) -> SecretValue {
        guard
            case .items(let results) = try transport.perform(
                .copyMatching(query(id, in: collection, [.data, .attributes]))),
            let result = results.first, let bytes = result.secret
        else { throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)") }
        let contentType = Self.contentType(result.attributes ?? [:])
        return SecretValue(bytes: bytes, contentType: contentType)
    }

    /// Item `id`'s secret alone, for a caller that knows its content type (from the search that
    /// found it, ``SearchMatch/contentType``): keychaind opens the item as for ``secret(of:in:)``
    /// and sends the secret without the item's attributes.
    func secretBytes(of id: String, in collection: String) throws(KeychainError) -> SecretBytes {
        guard case .items(let results) = try transport.perform(.copyMatching(query(id, in: collection, .data))),
            let bytes = results.first?.secret
        else { throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)") }
        return bytes
    }

    /// How many items of one collection `GetSecrets` must name for their secrets to come in one
    /// request (``secrets(in:)``) rather than one request each.
    static let batchThreshold = 16

    /// The secret of every item of the client's in `collection`, by id: one request.
    func secrets(in collection: String) throws(KeychainError) -> [String: SecretValue] {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string(Self.servicePrefix + collection)], limit: .all,
            returns: [.data, .attributes])
        let reply: KeychainReply
        do throws(KeychainError) {
            reply = try transport.perform(.copyMatching(query))
        } catch  where error.status == KeychainError.errSecItemNotFound.status {
            return [:]
        }
        guard case .items(let results) = reply else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a search out of turn")
        }
        var secrets: [String: SecretValue] = [:]
        for result in results {
            guard let attributes = result.attributes, case .string(let id)? = attributes["acct"],
                let bytes = result.secret
            else { continue }
            let contentType = Self.contentType(attributes)
            secrets[id] = SecretValue(bytes: bytes, contentType: contentType)
        }
        return secrets
    }

    func create(
        in collection: String, label: String, attributes: [String: String], secret: SecretValue, replacing: Bool
    ) throws(KeychainError) -> SecretItem {
        if replacing,
            let existing = try items(in: collection, matching: attributes).first(where: {
                $0.attributes == attributes
            })
        {
            try update(existing.id, in: collection, label: label, attributes: nil, secret: secret)
            return try item(existing.id, in: collection)
        }
        let id = SecretItem.newID()
        var fields: [String: AttributeValue] = [
            "svce": .string(Self.servicePrefix + collection), "acct": .string(id), "labl": .string(label),
            Self.contentTypeAttribute: .string(secret.contentType),
        ]
        for (name, value) in attributes { fields[ItemClass.secretServiceAttributePrefix + name] = .string(value) }
        let item = NewItem(
            itemClass: .genericPassword, attributes: fields, accessibility: .whenUnlocked, secret: secret.bytes,
            returns: .attributes)
        guard case .items(let results) = try transport.perform(.add(item)),
            let added = results.first?.attributes.flatMap(Self.item(from:))
        else { throw KeychainError(.errSecInternalComponent, "the keychain answered an add out of turn") }
        return added
    }

    func update(
        _ id: String, in collection: String, label: String?, attributes: [String: String]?, secret: SecretValue?
    ) throws(KeychainError) {
        var changes = ItemChanges(secret: secret?.bytes)
        if let label { changes.attributes["labl"] = .string(label) }
        if let secret { changes.attributes[Self.contentTypeAttribute] = .string(secret.contentType) }
        if let attributes {
            changes.replacesSecretServiceAttributes = true
            for (name, value) in attributes {
                changes.attributes[ItemClass.secretServiceAttributePrefix + name] = .string(value)
            }
        }
        _ = try transport.perform(.update(query(id, in: collection, []), changes))
    }

    func delete(_ id: String, in collection: String) throws(KeychainError) {
        _ = try transport.perform(.delete(query(id, in: collection, [])))
    }

    /// The items of `collection` (every collection: nil) with all of `attributes`, in one
    /// request: the client's own and the other apps' ones the owner let it read, readable; the
    /// other apps' others not (they show as locked).
    ///
    /// With `stamp`, keychaind's change number taken before: the same search again is answered
    /// from the last while the number has not moved (``KeptSearch``); without, keychaind is asked.
    func search(
        in collection: String?, matching attributes: [String: String], at stamp: DaemonTransport.ChangeStamp?
    ) throws(KeychainError) -> [SearchMatch] {
        if let kept, let stamp, kept.answers(collection, attributes, at: stamp) { return kept.matches }
        kept = nil
        let matches = try searchKeychain(in: collection, matching: attributes)
        if let stamp, matches.count <= KeptSearch.mostMatches {
            kept = KeptSearch(collection: collection, attributes: attributes, stamp: stamp, matches: matches)
        }
        return matches
    }

    /// ``search(in:matching:at:)``, asking keychaind.
    private func searchKeychain(
        in collection: String?, matching attributes: [String: String]
    ) throws(KeychainError) -> [SearchMatch] {
        var query: [String: AttributeValue] = [:]
        for (name, value) in attributes { query[ItemClass.secretServiceAttributePrefix + name] = .string(value) }
        if let collection { query["svce"] = .string(Self.servicePrefix + collection) }
        let matches = try itemMatches(query)
        // The items of a search are of one collection or a few: each service is read once.
        var service = ""
        var collection = ""
        return matches.compactMap { match in
            if match.service != service {
                guard match.service.hasPrefix(Self.servicePrefix) else { return nil }
                service = match.service
                collection = String(match.service.dropFirst(Self.servicePrefix.count))
            }
            return SearchMatch(
                id: match.account, collection: collection, readable: match.readable, label: match.label,
                contentType: match.contentType)
        }
    }

    /// keychaind's matches of `query`, with content types when keychaind sends them.
    private func itemMatches(_ query: [String: AttributeValue]) throws(KeychainError) -> [SecretItemMatch] {
        guard searchesWithContentTypes else { return try matches(.searchSecretItems(query)) }
        do throws(KeychainError) {
            return try matches(.searchSecretItemsWithContentTypes(query))
        } catch  where error.status == KeychainError.errSecDecode.status {
            // An earlier keychaind refuses a request it does not know (errSecDecode) and closes
            // the connection; a damaged keychain refuses the plain search too. The search is a
            // read: asked once more should the closing connection have taken it.
            let found: [SecretItemMatch]
            do throws(KeychainError) {
                found = try matches(.searchSecretItems(query))
            } catch  where error.status == KeychainError.errSecIO.status {
                found = try matches(.searchSecretItems(query))
            }
            searchesWithContentTypes = false
            return found
        }
    }

    private func matches(_ search: KeychainRequest) throws(KeychainError) -> [SecretItemMatch] {
        guard case .secretItemMatches(let matches) = try transport.perform(search) else {
            throw KeychainError(.errSecInternalComponent, "the keychain answered a search out of turn")
        }
        return matches
    }

    /// Another app's item `id` that the owner let this client's app read, with its secret;
    /// `errSecInteractionNotAllowed` until then, `errSecItemNotFound` when there is none.
    func otherAppItem(_ id: String, in collection: String) throws(KeychainError) -> (SecretItem, SecretValue) {
        guard
            case .items(let results) = try transport.perform(
                .readOtherAppSecretItem(service: Self.servicePrefix + collection, account: id)),
            let result = results.first, let attributes = result.attributes, let item = Self.item(from: attributes),
            let bytes = result.secret
        else { throw KeychainError(.errSecItemNotFound, "no item \(id) in collection \(collection)") }
        let contentType = Self.contentType(attributes)
        return (item, SecretValue(bytes: bytes, contentType: contentType))
    }

    /// The request that asks the owner, on the keychain's sheet, to let this client's app read
    /// another app's item `id`; it is answered `biometry` when allowed.
    static func allowRequest(_ id: String, in collection: String) -> KeychainRequest {
        .allowOtherAppSecretItem(
            service: servicePrefix + collection, account: id,
            KeychainSheet.authentication(.biometryOrPasscode, reason: ""))
    }

    private func query(_ id: String, in collection: String, _ returns: ReturnSelection) -> ItemQuery {
        ItemQuery(
            itemClass: .genericPassword,
            attributes: ["svce": .string(Self.servicePrefix + collection), "acct": .string(id)], limit: .one,
            returns: returns)
    }

    /// The Secret Service item a keychain item's attributes describe; nil for an item that is
    /// not one.
    static func item(from attributes: [String: AttributeValue]) -> SecretItem? {
        guard let service = attributes["svce"]?.text, service.hasPrefix(servicePrefix),
            let id = attributes["acct"]?.text
        else { return nil }
        var secretAttributes: [String: String] = [:]
        for (name, value) in attributes where name.hasPrefix(ItemClass.secretServiceAttributePrefix) {
            secretAttributes[String(name.dropFirst(ItemClass.secretServiceAttributePrefix.count))] = value.text
        }
        return SecretItem(
            id: id, collection: String(service.dropFirst(servicePrefix.count)),
            label: attributes["labl"]?.text ?? "", attributes: secretAttributes,
            created: seconds(attributes[CommonAttribute.creationDate]),
            modified: seconds(attributes[CommonAttribute.modificationDate]))
    }

    /// The secret's content type an item's attributes record (`text/plain` when none).
    private static func contentType(_ attributes: [String: AttributeValue]) -> String {
        attributes[contentTypeAttribute]?.text ?? "text/plain"
    }

    /// A keychain date as the Secret Service's seconds since 1970 (0 for none).
    static func seconds(_ value: AttributeValue?) -> UInt64 {
        guard case .date(let date)? = value, date.timeIntervalSince1970 > 0 else { return 0 }
        return UInt64(date.timeIntervalSince1970)
    }
}
