import KeychainProtocol

/// `org.freedesktop.DBus.Properties` of the service, collections and items.
extension SecretServiceProvider {
    func answerProperties(_ call: SecretCall) throws(DBusFailure) -> [DBusValue] {
        switch call.member {
        case "Get":
            let arguments = try call.arguments("ss")
            let name = arguments[1].text ?? ""
            let all = try properties(call, interface: arguments[0].text ?? "", only: name)
            guard let value = all[name] else {
                throw DBusFailure.invalidArguments("\(call.path.path) has no property \(name)")
            }
            return [.variant(value)]
        case "GetAll":
            let all = try properties(call, interface: try call.arguments("s")[0].text ?? "")
            return [
                .dictionary(
                    key: "s", value: "v",
                    all.sorted { $0.key < $1.key }.map {
                        DBusDictionaryEntry(key: .string($0.key), value: .variant($0.value))
                    })
            ]
        case "Set":
            let arguments = try call.arguments("ssv")
            guard case .variant(let value) = arguments[2] else { throw DBusFailure.invalidArguments("no value") }
            try setProperty(call, arguments[1].text ?? "", value)
            return []
        default:
            throw call.unknown
        }
    }

    /// The properties of the object `call` names, in `interface` (all of its own: ""); with
    /// `only`, that one at least (a collection's `Items`, a search of all its items, is left
    /// out when another is asked for: clients ask `Locked` before each change).
    private func properties(
        _ call: SecretCall, interface: String, only: String? = nil
    ) throws(DBusFailure) -> [String: DBusValue] {
        let client = call.client
        switch call.path {
        case .service:
            guard interface.isEmpty || interface == Self.serviceInterface else { return [:] }
            let collections = try keychain(client) { () throws(KeychainError) in try client.collections.all() }
            return ["Collections": .objectPaths(collections.map { SecretObjectPath.collection($0.name).path })]
        case .collection(let name):
            guard interface.isEmpty || interface == Self.collectionInterface else { return [:] }
            let collection = try keychain(client) { () throws(KeychainError) in
                try client.collections.collection(name)
            }
            let locked = try isLocked(client, collection: name)
            var properties: [String: DBusValue] = [
                "Label": .string(collection.label), "Locked": .boolean(locked),
                "Created": .uint64(collection.created), "Modified": .uint64(collection.modified),
            ]
            if only == nil || only == "Items" {
                let items = locked ? (unlocked: [], locked: []) : try search(client, in: name, [:])
                properties["Items"] = .objectPaths(items.unlocked + items.locked)
            }
            return properties
        case .item(let collection, let id):
            guard interface.isEmpty || interface == Self.itemInterface else { return [:] }
            // Listed as unlocked by the client's search a moment ago, with its label when the
            // search had it (RecentlyUnlockedItems).
            if only == "Locked", client.recentlyUnlocked.listedUnlocked(call.path.path) {
                return ["Locked": .boolean(false)]
            }
            if only == "Label", let label = client.recentlyUnlocked.label(of: call.path.path) {
                return ["Label": .string(label)]
            }
            guard let item = try readableItem(client, id, in: collection) else {
                // Another app's, which the owner has not let this one read: locked, and nothing
                // of it shown.
                return [
                    "Locked": .boolean(true), "Attributes": .stringDictionary([:]), "Label": .string(""),
                    "Created": .uint64(0), "Modified": .uint64(0),
                ]
            }
            // Its attributes opened, so its protection class is open and its secret can be read
            // (an item's attributes and secret are sealed under the same class key): unlocked,
            // without asking the keychain again.
            return [
                "Locked": .boolean(false),
                "Attributes": .stringDictionary(item.attributes), "Label": .string(item.label),
                "Created": .uint64(item.created), "Modified": .uint64(item.modified),
            ]
        case .session, .prompt:
            return [:]
        }
    }

    /// Item `id`: the client's own, or another app's the owner let it read; nil for another
    /// app's that it may not read yet, and for any while the keychain is locked (its `Locked`
    /// says so, as the specification has it, rather than the call failing).
    private func readableItem(
        _ client: BusClient, _ id: String, in collection: String
    ) throws(DBusFailure)
        -> SecretItem?
    {
        do throws(KeychainError) {
            return try client.store(for: collection).item(id, in: collection)
        } catch  where error.status == KeychainError.errSecInteractionNotAllowed.status {
            return nil
        } catch  where error.status == KeychainError.errSecItemNotFound.status && collection != SessionSecretItems.name
        {
            do throws(KeychainError) {
                return try client.keychainItems.otherAppItem(id, in: collection).0
            } catch  where error.status == KeychainError.errSecInteractionNotAllowed.status {
                return nil
            } catch {
                throw failure(error, client)
            }
        } catch {
            throw failure(error, client)
        }
    }

    /// True while `collection` is locked: the session collection never is; the others are
    /// while the keychain is.
    private func isLocked(_ client: BusClient, collection: String) throws(DBusFailure) -> Bool {
        guard collection != SessionSecretItems.name else { return false }
        return try keychain(client) { () throws(KeychainError) in try isLocked(client) }
    }

    private func setProperty(_ call: SecretCall, _ name: String, _ value: DBusValue) throws(DBusFailure) {
        let client = call.client
        switch (call.path, name) {
        case (.collection(let collection), "Label"):
            guard let label = value.text else { throw DBusFailure.invalidArguments("Label takes a string") }
            try keychain(client) { () throws(KeychainError) in try client.collections.setLabel(label, of: collection) }
            signal(
                client, path: SecretObjectPath.root, interface: Self.serviceInterface, member: "CollectionChanged",
                [.objectPath(call.path.path)])
        case (.item(let collection, let id), "Label"):
            guard let label = value.text else { throw DBusFailure.invalidArguments("Label takes a string") }
            try SecretItemLimits.check(label: label, attributes: nil, secret: nil)
            try itemWrite(client, id, in: collection) { () throws(KeychainError) in
                try client.store(for: collection).update(id, in: collection, label: label, attributes: nil, secret: nil)
            }
            itemChanged(client, collection, call.path.path)
        case (.item(let collection, let id), "Attributes"):
            guard let attributes = value.stringDictionary else {
                throw DBusFailure.invalidArguments("Attributes takes a{ss}")
            }
            try SecretItemLimits.check(label: nil, attributes: attributes, secret: nil)
            try itemWrite(client, id, in: collection) { () throws(KeychainError) in
                try client.store(for: collection).update(
                    id, in: collection, label: nil, attributes: attributes, secret: nil)
            }
            itemChanged(client, collection, call.path.path)
        default:
            throw DBusFailure(
                name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                message: "\(name) of \(call.path.path) cannot be set")
        }
    }
}
