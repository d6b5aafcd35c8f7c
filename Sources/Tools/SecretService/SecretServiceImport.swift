import Foundation
import KeychainClient
import KeychainProtocol
import KeychainSupport

/// `keychain-secret-service import`: every item of the Secret Service provider the user had
/// (gnome-keyring, KeePassXC: whichever serves `org.freedesktop.secrets` now) copied into the
/// keychain, with its label, attributes, content type and created and modified times, over
/// D-Bus as any client reads them (an encrypted session; a locked collection is unlocked
/// through the provider's own prompt). Nothing is deleted from the old provider.
///
/// The items go into the `login` collection as the importer's own (this program's access
/// group): no app had them in the keychain before, so they belong to the owner until an app
/// asks for one and the owner allows it (``KeychainRequest/allowOtherAppSecretItem(service:account:_:)``).
/// Each records where it came from (`icmt`: `secret-service import` and its old path), so a
/// second import adds nothing twice. The `session` collection, in memory only, is left alone.
public struct SecretServiceImport {
    /// What an import did.
    public struct Outcome: Sendable, Equatable {
        /// Items copied into the keychain.
        public var imported = 0
        /// Items a previous import had copied already.
        public var alreadyThere = 0
        /// The provider's program, in words.
        public var provider = ""
    }

    /// Why an import could not run.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let bus: BusConnection
    private let transport: any KeychainTransport
    private static let service = "org.freedesktop.secrets"
    private static let markerPrefix = "secret-service import "

    /// An import from the provider on the session bus into the keychain `transport` reaches.
    public init(transport: any KeychainTransport = DaemonTransport()) throws(Failure) {
        do throws(DBusFailure) {
            bus = try BusConnection.session()
        } catch {
            throw Failure(description: "no session bus (\(error.message)): run it in the session of the old provider")
        }
        self.transport = transport
    }

    /// Copies every item in; the counts, and the provider's name.
    public func run() throws(Failure) -> Outcome {
        var outcome = Outcome()
        guard let owner = bus.owner(of: Self.service) else {
            throw Failure(description: "nothing serves \(Self.service) on this session bus: start the old provider")
        }
        let program = (try? bus.credentials(of: owner)).flatMap { ProcessFiles.executable($0.process.pid) } ?? owner
        if program.hasSuffix("/keychain-secret-service") {
            throw Failure(
                description: "the keychain already serves \(Self.service): stop keychain-secret-service and start the "
                    + "old provider to import from it")
        }
        outcome.provider = program
        let (session, key) = try openSession()
        defer { _ = try? call(session, "org.freedesktop.Secret.Session", "Close", []) }
        guard case .variant(let listed)? = try property(SecretObjectPath.root, "Service", "Collections").first,
            let collections = listed.objectPaths
        else { throw Failure(description: "\(program) lists no collections") }
        for collection in collections where !collection.hasSuffix("/session") {
            try unlock(collection)
            guard case .variant(let items)? = try property(collection, "Collection", "Items").first,
                let paths = items.objectPaths, !paths.isEmpty
            else { continue }
            let secrets = try call(
                SecretObjectPath.root, "org.freedesktop.Secret.Service", "GetSecrets",
                [.objectPaths(paths), .objectPath(session)])
            guard case .dictionary(_, _, let entries)? = secrets.first else { continue }
            for entry in entries {
                guard let path = entry.key.text, case .structure(let fields) = entry.value, fields.count == 4,
                    case .bytes(let parameters) = fields[1], case .bytes(let value) = fields[2]
                else { continue }
                let secret: SecretBytes
                do throws(SecretSessionError) {
                    secret = try key.decrypt(parameters: parameters, value: value)
                } catch {
                    throw Failure(description: "the secret of \(path) could not be decrypted: \(error)")
                }
                let copied = try copy(path, secret: secret, contentType: fields[3].text ?? "text/plain")
                if copied { outcome.imported += 1 } else { outcome.alreadyThere += 1 }
            }
        }
        return outcome
    }

    /// Adds the item at `path` unless an import already did; true when added.
    private func copy(_ path: String, secret: SecretBytes, contentType: String) throws(Failure) -> Bool {
        let marker = Self.markerPrefix + path
        let previous = ItemQuery(itemClass: .genericPassword, attributes: ["icmt": .string(marker)])
        do throws(KeychainError) {
            _ = try transport.perform(.copyMatching(previous))
            return false
        } catch  where error.status == KeychainError.errSecItemNotFound.status {
        } catch {
            throw Failure(description: "the keychain: \(error.message) (OSStatus \(error.status))")
        }
        guard case .variant(let labelValue)? = try property(path, "Item", "Label").first,
            case .variant(let attributesValue)? = try property(path, "Item", "Attributes").first,
            case .variant(.uint64(let created))? = try property(path, "Item", "Created").first,
            case .variant(.uint64(let modified))? = try property(path, "Item", "Modified").first
        else { throw Failure(description: "\(path) has no label, attributes or dates") }
        var attributes: [String: AttributeValue] = [
            "svce": .string(SecretServiceItemGrant.servicePrefix + SecretObjectPath.defaultCollection),
            "acct": .string(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()),
            "labl": .string(labelValue.text ?? ""), "gena": .string(contentType), "icmt": .string(marker),
        ]
        for (name, value) in attributesValue.stringDictionary ?? [:] {
            attributes[ItemClass.secretServiceAttributePrefix + name] = .string(value)
        }
        var item = NewItem(
            itemClass: .genericPassword, attributes: attributes, accessibility: .whenUnlocked, secret: secret)
        let now = Date()
        let createdDate = min(Date(timeIntervalSince1970: TimeInterval(created)), now)
        item.keptDates = KeptDates(
            created: createdDate,
            modified: max(createdDate, min(Date(timeIntervalSince1970: TimeInterval(modified)), now)))
        do throws(KeychainError) {
            _ = try transport.perform(.add(item))
        } catch {
            throw Failure(description: "the keychain refused \(path): \(error.message) (OSStatus \(error.status))")
        }
        return true
    }

    /// Opens a `dh-ietf1024-sha256-aes128-cbc-pkcs7` session: its path and key.
    private func openSession() throws(Failure) -> (String, SecretSessionKey) {
        let exponent = SecretSessionKey.randomExponent()
        let publicKey: [UInt8]
        do throws(SecretSessionError) {
            publicKey = try SecretSessionKey.publicKey(of: exponent)
        } catch {
            throw Failure(description: "\(error)")
        }
        let reply = try call(
            SecretObjectPath.root, "org.freedesktop.Secret.Service", "OpenSession",
            [.string(SecretSessionKey.algorithm), .variant(.bytes(publicKey))])
        guard reply.count == 2, case .variant(.bytes(let serviceKey)) = reply[0], let path = reply[1].text else {
            throw Failure(description: "the provider opened no encrypted session")
        }
        do throws(SecretSessionError) {
            return (path, try SecretSessionKey(privateExponent: exponent, peerPublicKey: serviceKey))
        } catch {
            throw Failure(description: "the provider's session key is not usable: \(error)")
        }
    }

    /// Unlocks `collection` when it is locked, through the provider's own prompt (its window),
    /// waiting up to two minutes for the person.
    private func unlock(_ collection: String) throws(Failure) {
        guard case .variant(.boolean(true))? = try property(collection, "Collection", "Locked").first else { return }
        let reply = try call(
            SecretObjectPath.root, "org.freedesktop.Secret.Service", "Unlock", [.objectPaths([collection])])
        guard reply.count == 2, let prompt = reply[1].text, prompt != SecretObjectPath.none else { return }
        do throws(DBusFailure) {
            try bus.addMatch(
                "type='signal',interface='org.freedesktop.Secret.Prompt',member='Completed',path='\(prompt)'")
        } catch {
            throw Failure(description: error.message)
        }
        _ = try call(prompt, "org.freedesktop.Secret.Prompt", "Prompt", [.string("")])
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, bus.readWrite() {
            while let message = bus.nextMessage() {
                guard message.isSignal, message.member == "Completed", message.path == prompt else { continue }
                if case .boolean(true)? = message.arguments()?.first {
                    throw Failure(description: "unlocking \(collection) was dismissed")
                }
                return
            }
            usleep(50_000)
        }
        throw Failure(description: "\(collection) stayed locked: unlock it in the old provider first")
    }

    private func property(_ path: String, _ interface: String, _ name: String) throws(Failure) -> [DBusValue] {
        try call(
            path, "org.freedesktop.DBus.Properties", "Get",
            [.string("org.freedesktop.Secret.\(interface)"), .string(name)])
    }

    private func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue]
    ) throws(Failure)
        -> [DBusValue]
    {
        guard
            let message = DBusMessage.methodCall(
                destination: Self.service, path: path, interface: interface, member: member, arguments)
        else { throw Failure(description: "out of memory") }
        do throws(DBusFailure) {
            guard let values = try bus.call(message, timeoutMilliseconds: 30_000).arguments() else {
                throw DBusFailure.failed("\(member) answered with a type this importer does not read")
            }
            return values
        } catch {
            throw Failure(description: "\(member) on \(path): \(error.message)")
        }
    }
}
