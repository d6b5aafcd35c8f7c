import KeychainProtocol

/// Collections, items, sessions and prompts: their methods.
extension SecretServiceProvider {
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"
    static let promptInterface = "org.freedesktop.Secret.Prompt"

    func createCollection(_ client: BusClient, label: String, alias: String) throws(KeychainError) -> String {
        let existing = try client.collections.all().map(\.name)
        let name = try client.collections.create(label: label, alias: alias)
        if !existing.contains(name) {
            signal(
                client, path: SecretObjectPath.root, interface: Self.serviceInterface, member: "CollectionCreated",
                [.objectPath(SecretObjectPath.collection(name).path)])
        }
        return name
    }

    func alias(_ client: BusClient, _ name: String) throws(KeychainError) -> String? {
        try client.collections.resolve(alias: name)
    }

    func setAlias(_ client: BusClient, _ alias: String, to path: String) throws(KeychainError) {
        if path == SecretObjectPath.none { return try client.collections.setAlias(alias, to: nil) }
        guard case .collection(let name)? = SecretObjectPath(path) else {
            throw KeychainError(.errSecParam, "\(path) is not a collection")
        }
        try client.collections.setAlias(alias, to: name)
    }

    func answerCollection(_ call: SecretCall, _ name: String) throws(DBusFailure) -> [DBusValue] {
        guard call.interface == Self.collectionInterface || call.interface.isEmpty else { throw call.unknown }
        let client = call.client
        try keychain(client) { () throws(KeychainError) in try client.collections.requireExists(name) }
        switch call.member {
        case "SearchItems":
            let attributes = try call.arguments("a{ss}")[0].stringDictionary ?? [:]
            let found = try search(client, in: name, attributes)
            return [.objectPaths(found.unlocked + found.locked)]
        case "CreateItem":
            let arguments = try call.arguments("a{sv}(oayays)b")
            let properties = arguments[0].variantDictionary ?? [:]
            guard case .structure(let fields) = arguments[1], fields.count == 4, let session = fields[0].text,
                case .bytes(let parameters) = fields[1], case .bytes(let value) = fields[2],
                let contentType = fields[3].text, case .boolean(let replacing) = arguments[2]
            else { throw DBusFailure.invalidArguments("CreateItem takes (a{sv}(oayays)b)") }
            let secret = try transferSession(client, session).secret(
                parameters: parameters, value: value, contentType: contentType)
            let attributes = properties["\(Self.itemInterface).Attributes"].map { $0.stringDictionary }
            guard let attributes = attributes ?? [:] else {
                throw DBusFailure.invalidArguments("\(Self.itemInterface).Attributes takes a{ss}")
            }
            let label = properties["\(Self.itemInterface).Label"]?.text ?? ""
            try SecretItemLimits.check(label: label, attributes: attributes, secret: secret)
            let before = replacing ? try search(client, in: name, attributes).unlocked : []
            let item = try keychain(client) { () throws(KeychainError) in
                try client.store(for: name).create(
                    in: name, label: label, attributes: attributes, secret: secret, replacing: replacing)
            }
            let path = SecretObjectPath.item(collection: name, id: item.id).path
            signal(
                client, path: SecretObjectPath.collection(name).path, interface: Self.collectionInterface,
                member: before.contains(path) ? "ItemChanged" : "ItemCreated", [.objectPath(path)])
            return [.objectPath(path), .objectPath(SecretObjectPath.none)]
        case "Delete":
            _ = try call.arguments("")
            try deleteCollection(client, name)
            return [.objectPath(SecretObjectPath.none)]
        default:
            throw call.unknown
        }
    }

    /// Deletes the client's items of `name`, and the collection itself when the client's app
    /// made it; the two built-in collections stay (empty of this app's items).
    private func deleteCollection(_ client: BusClient, _ name: String) throws(DBusFailure) {
        let store = client.store(for: name)
        try keychain(client) { () throws(KeychainError) in
            for item in try store.items(in: name, matching: [:]) { try store.delete(item.id, in: name) }
            if !SecretCollections.isBuiltIn(name) { try client.collections.deleteRecord(of: name) }
        }
        signal(
            client, path: SecretObjectPath.root, interface: Self.serviceInterface, member: "CollectionDeleted",
            [.objectPath(SecretObjectPath.collection(name).path)])
    }

    func answerItem(_ call: SecretCall, _ collection: String, _ id: String) throws(DBusFailure) -> [DBusValue] {
        guard call.interface == Self.itemInterface || call.interface.isEmpty else { throw call.unknown }
        let client = call.client
        let store = client.store(for: collection)
        let path = SecretObjectPath.item(collection: collection, id: id).path
        switch call.member {
        case "GetSecret":
            let session = try call.arguments("o")[0].text ?? ""
            let transfer = try transferSession(client, session)
            let secret: SecretValue
            do throws(KeychainError) {
                secret = try readableSecret(client, id, in: collection)
            } catch  where error.status == KeychainError.errSecInteractionNotAllowed.status {
                // The keychain is locked, or the item is another app's this program may not read
                // yet: either way the item is locked to it, as its Locked property says.
                throw DBusFailure.isLocked(
                    "the item is locked to this program: Unlock it first (the owner is asked for another app's item)")
            } catch {
                throw failure(error, client)
            }
            return [transfer.wireSecret(secret, session: session)]
        case "SetSecret":
            let arguments = try call.arguments("(oayays)")
            guard case .structure(let fields) = arguments[0], let session = fields[0].text,
                case .bytes(let parameters) = fields[1], case .bytes(let value) = fields[2],
                let contentType = fields[3].text
            else { throw DBusFailure.invalidArguments("SetSecret takes ((oayays))") }
            let secret = try transferSession(client, session).secret(
                parameters: parameters, value: value, contentType: contentType)
            try SecretItemLimits.check(label: nil, attributes: nil, secret: secret)
            try itemWrite(client, id, in: collection) { () throws(KeychainError) in
                try store.update(id, in: collection, label: nil, attributes: nil, secret: secret)
            }
            itemChanged(client, collection, path)
            return []
        case "Delete":
            _ = try call.arguments("")
            try itemWrite(client, id, in: collection) { () throws(KeychainError) in
                try store.delete(id, in: collection)
            }
            signal(
                client, path: SecretObjectPath.collection(collection).path, interface: Self.collectionInterface,
                member: "ItemDeleted", [.objectPath(path)])
            return [.objectPath(SecretObjectPath.none)]
        default:
            throw call.unknown
        }
    }

    /// A change to item `id` (its secret, label or attributes, or its deletion): for an item
    /// that is not the client's, `IsLocked` while it may not read it (as its `Locked` property
    /// says, and as `GetSecret` answers), `AccessDenied` once the owner let it read it (reading
    /// is all the owner allowed); `NoSuchObject` only for an item that does not exist.
    func itemWrite(
        _ client: BusClient, _ id: String, in collection: String, _ body: () throws(KeychainError) -> Void
    ) throws(DBusFailure) {
        do throws(KeychainError) {
            try body()
        } catch  where error.status == KeychainError.errSecItemNotFound.status && collection != SessionSecretItems.name
        {
            do throws(KeychainError) {
                _ = try client.keychainItems.otherAppItem(id, in: collection)
            } catch  where error.status == KeychainError.errSecInteractionNotAllowed.status {
                throw DBusFailure.isLocked("the item is another app's, locked to this program")
            } catch {
                throw failure(error, client)
            }
            throw DBusFailure.accessDenied("the item is another app's: this program may read it, not change it")
        } catch {
            throw failure(error, client)
        }
    }

    func itemChanged(_ client: BusClient, _ collection: String, _ path: String) {
        signal(
            client, path: SecretObjectPath.collection(collection).path, interface: Self.collectionInterface,
            member: "ItemChanged", [.objectPath(path)])
    }

    func answerSession(_ call: SecretCall, _ id: String) throws(DBusFailure) -> [DBusValue] {
        guard call.interface == Self.sessionInterface || call.interface.isEmpty, call.member == "Close" else {
            throw call.unknown
        }
        guard call.client.sessions.removeValue(forKey: id) != nil else {
            throw DBusFailure.noSuchObject("\(call.path.path) is not a session of this client")
        }
        return []
    }
}
