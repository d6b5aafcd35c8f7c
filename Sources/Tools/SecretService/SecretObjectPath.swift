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
        guard path.utf8.count > Self.root.utf8.count + 1, path.hasPrefix(Self.root + "/") else { return nil }
        // Split on the UTF-8 view: a GetSecrets names hundreds of paths.
        var parts: [String] = []
        for part in path.utf8.dropFirst(Self.root.utf8.count + 1).split(
            separator: UInt8(ascii: "/"), maxSplits: 3, omittingEmptySubsequences: false)
        {
            guard Self.isElement(part) else { return nil }
            parts.append(String(decoding: part, as: UTF8.self))
        }
        switch (parts.first, parts.count) {
        case ("collection", 2): self = .collection(parts[1])
        case ("collection", 3): self = .item(collection: parts[1], id: parts[2])
        case ("aliases", 2): self = .collection(Self.collection(ofAlias: parts[1]) ?? parts[1])
        case ("aliases", 3): self = .item(collection: Self.collection(ofAlias: parts[1]) ?? parts[1], id: parts[2])
        case ("session", 2): self = .session(parts[1])
        case ("prompt", 2): self = .prompt(parts[1])
        default: return nil
        }
    }

    /// The object's path (a collection's under `collection/`, never under `aliases/`).
    var path: String {
        switch self {
        case .service: Self.root
        case .collection(let name): "\(Self.root)/collection/\(name)"
        case .item(let collection, let id): "\(Self.root)/collection/\(collection)/\(id)"
        case .session(let id): "\(Self.root)/session/\(id)"
        case .prompt(let id): "\(Self.root)/prompt/\(id)"
        }
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

    /// True for a valid path element's UTF-8 bytes: one or more of `[A-Za-z0-9_]`.
    private static func isElement(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F
            }
    }
}
