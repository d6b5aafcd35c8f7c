import KeychainProtocol

/// `org.freedesktop.Secret.Service` at `/org/freedesktop/secrets`.
extension SecretServiceProvider {
    static let serviceInterface = "org.freedesktop.Secret.Service"

    func answerService(_ call: SecretCall) throws(DBusFailure) -> [DBusValue] {
        guard call.interface == Self.serviceInterface || call.interface.isEmpty else { throw call.unknown }
        let client = call.client
        switch call.member {
        case "OpenSession":
            let arguments = try call.arguments("sv")
            guard case .variant(let input) = arguments[1] else { throw DBusFailure.invalidArguments("no input") }
            return try openSession(client, algorithm: arguments[0].text ?? "", input: input)
        case "CreateCollection":
            let arguments = try call.arguments("a{sv}s")
            let properties = arguments[0].variantDictionary ?? [:]
            let label = properties["org.freedesktop.Secret.Collection.Label"]?.text ?? ""
            let collection = try keychain(client) { () throws(KeychainError) in
                try createCollection(client, label: label, alias: arguments[1].text ?? "")
            }
            return [.objectPath(SecretObjectPath.collection(collection).path), .objectPath(SecretObjectPath.none)]
        case "SearchItems":
            let attributes = try call.arguments("a{ss}")[0].stringDictionary ?? [:]
            let found = try search(client, in: nil, attributes)
            return [.objectPaths(found.unlocked), .objectPaths(found.locked)]
        case "Unlock":
            let objects = try call.arguments("ao")[0].objectPaths ?? []
            return try unlock(client, objects)
        case "Lock":
            let objects = try call.arguments("ao")[0].objectPaths ?? []
            try keychain(client) { () throws(KeychainError) in _ = try client.transport.perform(.lock) }
            return [.objectPaths(objects.filter { SecretObjectPath($0) != nil }), .objectPath(SecretObjectPath.none)]
        case "GetSecrets":
            let arguments = try call.arguments("aoo")
            return [try secrets(client, of: arguments[0].objectPaths ?? [], session: arguments[1].text ?? "")]
        case "ReadAlias":
            let name = try call.arguments("s")[0].text ?? ""
            let collection = try keychain(client) { () throws(KeychainError) in try alias(client, name) }
            return [.objectPath(collection.map { SecretObjectPath.collection($0).path } ?? SecretObjectPath.none)]
        case "SetAlias":
            let arguments = try call.arguments("so")
            try keychain(client) { () throws(KeychainError) in
                try setAlias(client, arguments[0].text ?? "", to: arguments[1].text ?? "")
            }
            return []
        default:
            throw call.unknown
        }
    }

    /// `OpenSession`: `plain`, or the DH key agreement.
    private func openSession(
        _ client: BusClient, algorithm: String, input: DBusValue
    ) throws(DBusFailure) -> [DBusValue] {
        let session: TransferSession
        let output: DBusValue
        switch algorithm {
        case "plain":
            session = .plain
            output = .string("")
        case SecretSessionKey.algorithm:
            guard case .bytes(let clientKey) = input else {
                throw DBusFailure.invalidArguments("\(algorithm) takes the client's public key as bytes (ay)")
            }
            do throws(SecretSessionError) {
                let (key, serviceKey) = try SecretSessionKey.negotiate(clientPublicKey: clientKey)
                session = .encrypted(key)
                output = .bytes(serviceKey)
            } catch {
                throw DBusFailure.invalidArguments("\(error)")
            }
        default:
            throw DBusFailure.notSupported(
                "the algorithm \(algorithm) is not supported: plain and \(SecretSessionKey.algorithm) are")
        }
        let name = newObjectName()
        client.sessions[name] = session
        return [.variant(output), .objectPath(SecretObjectPath.session(name).path)]
    }

    /// The paths of the items in `collection` (every collection: nil) with `attributes`: the
    /// client's own, from the keychain and the session collection, and the other apps' ones the
    /// owner let it read, unlocked; the other apps' others, locked (Unlock asks the owner).
    func search(
        _ client: BusClient, in collection: String?, _ attributes: [String: String]
    ) throws(DBusFailure)
        -> (unlocked: [String], locked: [String])
    {
        var unlocked: [RecentlyUnlockedItems.Item] = []
        var locked: [String] = []
        // Before the search: a change while it is answered ends what it lists at once.
        let stamp = changeWatch?.changeStamp()
        if collection != SessionSecretItems.name {
            let matches = try keychain(client) { () throws(KeychainError) in
                try client.keychainItems.search(in: collection, matching: attributes, at: stamp)
            }
            // Each collection's part of the paths made once: a search may list thousands.
            var pathsCollection: String?
            var itemPathPrefix = ""
            unlocked.reserveCapacity(matches.count)
            for match in matches {
                if match.collection != pathsCollection {
                    pathsCollection = match.collection
                    itemPathPrefix = SecretObjectPath.itemPathPrefix(match.collection)
                }
                let path = itemPathPrefix + match.id
                if match.readable {
                    unlocked.append(
                        RecentlyUnlockedItems.Item(path: path, label: match.label, contentType: match.contentType))
                } else {
                    locked.append(path)
                }
            }
        }
        if collection == nil || collection == SessionSecretItems.name {
            let sessionItems = try keychain(client) { () throws(KeychainError) in
                try client.sessionItems.items(in: SessionSecretItems.name, matching: attributes)
            }
            unlocked += sessionItems.map { item in
                RecentlyUnlockedItems.Item(
                    path: SecretObjectPath.item(collection: item.collection, id: item.id).path, label: item.label)
            }
        }
        client.recentlyUnlocked.remember(unlocked, stamp: stamp)
        return (unlocked.map(\.path), locked)
    }

    /// `GetSecrets`: the secret of each item named that the client has (others are left out).
    private func secrets(_ client: BusClient, of paths: [String], session: String) throws(DBusFailure) -> DBusValue {
        let transfer = try transferSession(client, session)
        // Many items of one collection come in one request (Firefox's old keyring extension
        // fetched every item at each tab switch); a few, one by one.
        var fetched: [String: [String: SecretValue]] = [:]
        var wanted: [String: [String]] = [:]
        let named = paths.map(SecretObjectPath.init)
        for case .item(let collection, let id)? in named {
            wanted[collection, default: []].append(id)
        }
        for (collection, ids) in wanted
        where ids.count >= KeychainSecretItems.batchThreshold && collection != SessionSecretItems.name {
            fetched[collection] = try keychain(client) { () throws(KeychainError) in
                try client.keychainItems.secrets(in: collection)
            }
        }
        var entries: [DBusDictionaryEntry] = []
        for object in named {
            guard case .item(let collection, let id)? = object else { continue }
            let secret: SecretValue
            do throws(KeychainError) {
                if let known = fetched[collection]?[id] {
                    secret = known
                } else {
                    secret = try readableSecret(client, id, in: collection)
                }
            } catch
                where error.status == KeychainError.errSecItemNotFound.status
                || error.status == KeychainError.errSecInteractionNotAllowed.status
            {
                // Not the client's, or another app's the owner has not let it read: left out.
                continue
            } catch {
                throw failure(error, client)
            }
            entries.append(
                DBusDictionaryEntry(
                    key: .objectPath(SecretObjectPath.item(collection: collection, id: id).path),
                    value: transfer.wireSecret(secret, session: session)))
        }
        return .dictionary(key: "o", value: "(oayays)", entries)
    }

    /// The client's session at `path`, or `NoSession`.
    func transferSession(_ client: BusClient, _ path: String) throws(DBusFailure) -> TransferSession {
        guard case .session(let name)? = SecretObjectPath(path), let session = client.sessions[name] else {
            throw DBusFailure.noSession("\(path) is not a session this client opened")
        }
        return session
    }

    /// Item `id`'s secret: the client's own, or another app's the owner let it read.
    ///
    /// For an item of the client's own that its latest search found, with nothing changed since
    /// (``RecentlyUnlockedItems/contentType(of:)``), keychaind is asked for the secret alone and
    /// the content type is the search's; it stands only if nothing changed until the secret came
    /// either, else the item is asked for again, attributes and all.
    func readableSecret(
        _ client: BusClient, _ id: String, in collection: String
    ) throws(KeychainError)
        -> SecretValue
    {
        if collection != SessionSecretItems.name,
            case let path = SecretObjectPath.item(collection: collection, id: id).path,
            let contentType = client.recentlyUnlocked.contentType(of: path)
        {
            let bytes = try client.keychainItems.secretBytes(of: id, in: collection)
            if client.recentlyUnlocked.contentType(of: path) == contentType {
                return SecretValue(bytes: bytes, contentType: contentType)
            }
        }
        do throws(KeychainError) {
            return try client.store(for: collection).secret(of: id, in: collection)
        } catch  where error.status == KeychainError.errSecItemNotFound.status && collection != SessionSecretItems.name
        {
            return try client.keychainItems.otherAppItem(id, in: collection).1
        }
    }

    /// `Unlock`: what is unlocked already at once; else a prompt: the keychain's unlock sheet
    /// when the keychain is locked, and the owner's leave for each other app's item named.
    private func unlock(_ client: BusClient, _ objects: [String]) throws(DBusFailure) -> [DBusValue] {
        let keychainLocked = try keychain(client) { () throws(KeychainError) in try isLocked(client) }
        var unlocked: [String] = []
        var prompt = PendingPrompt(unlocksKeychain: keychainLocked, objects: [], otherAppItems: [])
        for path in objects {
            guard let object = SecretObjectPath(path) else { continue }
            if !keychainLocked, case .item(let collection, let id) = object, collection != SessionSecretItems.name,
                try !ownsItem(client, id, in: collection)
            {
                do throws(KeychainError) {
                    _ = try client.keychainItems.otherAppItem(id, in: collection)
                    unlocked.append(object.path)
                } catch  where error.status == KeychainError.errSecInteractionNotAllowed.status {
                    prompt.otherAppItems.append(SearchMatch(id: id, collection: collection, readable: false))
                    prompt.objects.append(object.path)
                } catch  where error.status == KeychainError.errSecItemNotFound.status {
                    continue
                } catch {
                    throw failure(error, client)
                }
            } else if keychainLocked {
                prompt.objects.append(object.path)
            } else {
                unlocked.append(object.path)
            }
        }
        guard !prompt.objects.isEmpty else { return [.objectPaths(unlocked), .objectPath(SecretObjectPath.none)] }
        let name = newObjectName()
        client.prompts[name] = prompt
        return [.objectPaths(unlocked), .objectPath(SecretObjectPath.prompt(name).path)]
    }

    /// True when item `id` of `collection` is the client's own.
    private func ownsItem(_ client: BusClient, _ id: String, in collection: String) throws(DBusFailure) -> Bool {
        do throws(KeychainError) {
            _ = try client.keychainItems.item(id, in: collection)
            return true
        } catch  where error.status == KeychainError.errSecItemNotFound.status {
            return false
        } catch {
            throw failure(error, client)
        }
    }

    /// True while the keychain's `WhenUnlocked` items cannot be read.
    func isLocked(_ client: BusClient) throws(KeychainError) -> Bool {
        guard case .status(let status) = try client.transport.perform(.deviceStatus) else { return true }
        return !status.isUnlocked
    }

    /// Runs `body`, a keychain request, turning its error into the Secret Service's.
    func keychain<Value>(_ client: BusClient, _ body: () throws(KeychainError) -> Value) throws(DBusFailure) -> Value {
        do throws(KeychainError) {
            return try body()
        } catch {
            throw failure(error, client)
        }
    }

    /// The Secret Service's error for a keychain error.
    func failure(_ error: KeychainError, _ client: BusClient) -> DBusFailure {
        switch error.status {
        case KeychainError.errSecItemNotFound.status: return .noSuchObject(error.message)
        case KeychainError.errSecInteractionNotAllowed.status:
            if (try? isLocked(client)) == true {
                return .isLocked("the keychain is locked: unlock it (Unlock, or `keychainctl unlock`)")
            }
            return .accessDenied(error.message)
        case KeychainError.errSecMissingEntitlement.status, KeychainError.errSecAuthFailed.status:
            return .accessDenied(error.message)
        case KeychainError.errSecParam.status, KeychainError.errSecDataTooLarge.status:
            return .invalidArguments(error.message)
        default: return .failed("\(error.message) (OSStatus \(error.status))")
        }
    }
}
