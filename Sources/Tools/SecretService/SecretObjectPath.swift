/// The Secret Service's object paths: what a path names, and the path of each object.
///
/// Aliases resolve to their collection: `/org/freedesktop/secrets/aliases/default` (and the
/// alias `login`, gnome-keyring's name for the default collection, which clients hard-code)
/// name the collection `login`. Path elements are `[A-Za-z0-9_]` only.
enum SecretObjectPath: Equatable, Sendable {
    case service
    case collection(String)
    case item(collection: String, id: String)
    case session(String)
    case prompt(String)

    static let root = "/org/freedesktop/secrets"
    /// The collection every client has, on disk.
    static let defaultCollection = "login"
    /// The path that names nothing (`/`): no prompt, no object.
    static let none = "/"

    /// What `path` names, or nil.
    init?(_ path: String) {
        if path == Self.root {
            self = .service
            return
        }
        var path = path
        guard let named = path.withUTF8({ Self.named(by: $0) }) else { return nil }
        self = named
    }

    /// The root and the slash that follows it, as the bytes a path under it starts with.
    private static let rootPrefix = Array((root + "/").utf8)

    /// What the UTF-8 bytes of a path under the root name: its elements (at most three) read in
    /// one pass over the bytes. A call names one to hundreds of paths (GetSecrets), and splitting
    /// each into strings first was a tenth of the bridge's instructions in a lookup.
    private static func named(by bytes: UnsafeBufferPointer<UInt8>) -> SecretObjectPath? {
        let start = rootPrefix.count
        guard bytes.count > start, bytes.starts(with: rootPrefix) else { return nil }
        var parts: [String] = []
        parts.reserveCapacity(3)
        var elementStart = start
        for index in start...bytes.count {
            if index < bytes.count && bytes[index] != UInt8(ascii: "/") {
                guard isElementByte(bytes[index]) else { return nil }
                continue
            }
            guard index > elementStart, parts.count < 3 else { return nil }
            parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[elementStart..<index]), as: UTF8.self))
            elementStart = index + 1
        }
        switch (parts[0], parts.count) {
        case ("collection", 2): return .collection(parts[1])
        case ("collection", 3): return .item(collection: parts[1], id: parts[2])
        case ("aliases", 2): return .collection(collection(ofAlias: parts[1]) ?? parts[1])
        case ("aliases", 3): return .item(collection: collection(ofAlias: parts[1]) ?? parts[1], id: parts[2])
        case ("session", 2): return .session(parts[1])
        case ("prompt", 2): return .prompt(parts[1])
        default: return nil
        }
    }

    /// The object's path (a collection's under `collection/`, never under `aliases/`).
    var path: String {
        switch self {
        case .service: Self.root
        case .collection(let name): "\(Self.root)/collection/\(name)"
        case .item(let collection, let id): Self.itemPathPrefix(collection) + id
        case .session(let id): "\(Self.root)/session/\(id)"
        case .prompt(let id): "\(Self.root)/prompt/\(id)"
        }
    }

    /// The path of collection `collection`'s items up to their id: an item's path is this and
    /// its id (a search's thousands of paths make it once).
    static func itemPathPrefix(_ collection: String) -> String {
        "\(root)/collection/\(collection)/"
    }

    /// The collection alias `name` stands for: `default` and `login` for the default
    /// collection, `session` for the in-memory one; nil for another name.
    static func collection(ofAlias name: String) -> String? {
        switch name {
        case "default", "login": defaultCollection
        case "session": SessionSecretItems.name
        default: nil
        }
    }

    /// True for a byte a path element may hold: `[A-Za-z0-9_]`.
    private static func isElementByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x5F
    }
}
