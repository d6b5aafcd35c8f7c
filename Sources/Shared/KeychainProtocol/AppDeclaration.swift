/// What an app is declared to be on this machine, as Apple's entitlements say it on Apple
/// platforms: its application identifier, its `keychain-access-groups` and its application
/// groups (`com.apple.security.application-groups`).
///
/// The per-user daemon names an app by its executable's path. A developer whose code
/// hard-codes an access group or reads `agrp` declares the app's identifier and groups for one
/// executable (`keychainctl apps declare`), and the owner approves the declaration once, with
/// the passcode (an owner session). The app then belongs to exactly the groups an iOS app with
/// those entitlements belongs to, plus its own path's group, so items it stored before the
/// declaration stay reachable.
public struct AppDeclaration: Sendable, Hashable, Codable {
    /// The application identifier (`TEAMID.com.example.app` on Apple platforms).
    public var applicationIdentifier: String
    /// The `keychain-access-groups` entitlement, in order: the first is the default group.
    public var keychainAccessGroups: [String]
    /// The `com.apple.security.application-groups` entitlement: on iOS an app's application
    /// groups are keychain access groups too.
    public var applicationGroups: [String]

    /// The most groups a declaration names, of each kind.
    public static let maximumGroups = 64

    /// Creates a declaration.
    public init(applicationIdentifier: String, keychainAccessGroups: [String] = [], applicationGroups: [String] = []) {
        self.applicationIdentifier = applicationIdentifier
        self.keychainAccessGroups = keychainAccessGroups
        self.applicationGroups = applicationGroups
    }

    /// The app's access groups, the default (where items go without `kSecAttrAccessGroup`)
    /// first, in Apple's documented order: its `keychain-access-groups`, then its application
    /// identifier, then its application groups.
    public var accessGroups: [String] {
        var groups: [String] = []
        for group in keychainAccessGroups + [applicationIdentifier] + applicationGroups where !groups.contains(group) {
            groups.append(group)
        }
        return groups
    }

    private enum CodingKeys: String, CodingKey {
        case applicationIdentifier, keychainAccessGroups, applicationGroups
    }

    /// Reads a declaration; one stored before application groups were read has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        applicationIdentifier = try container.decode(String.self, forKey: .applicationIdentifier)
        keychainAccessGroups = try container.decode([String].self, forKey: .keychainAccessGroups)
        applicationGroups = try container.decodeIfPresent([String].self, forKey: .applicationGroups) ?? []
    }

    /// Whether `name` can name an app or an access group, here and in the system daemon's
    /// registry: 1 to 255 bytes, no leading `/` (paths name undeclared apps) and no `:` (the
    /// prefix of the names of sandboxed and untrusted apps).
    public static func canName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix("/") && !name.contains(":")
    }

    /// Refuses a declaration whose names could not be Apple's or could be taken for another
    /// kind of name here.
    ///
    /// - Throws: `errSecParam` for an empty name, one over 255 bytes, one that starts with `/`
    ///   (an app's own group is its path, never declared), holds `:` (the prefix of the names
    ///   of sandboxed and untrusted apps) or an unexpanded build variable (`$(AppIdentifierPrefix)`),
    ///   or more than ``maximumGroups`` groups of a kind.
    public func validate() throws(KeychainError) {
        guard keychainAccessGroups.count <= Self.maximumGroups, applicationGroups.count <= Self.maximumGroups else {
            throw KeychainError(
                .errSecParam,
                "an app declares at most \(Self.maximumGroups) keychain access groups, and as many application groups")
        }
        for name in [applicationIdentifier] + keychainAccessGroups + applicationGroups {
            guard Self.canName(name) else {
                throw KeychainError(
                    .errSecParam,
                    "\"\(name)\" cannot name an app or an access group (empty, over 255 bytes, or with a leading / "
                        + "or a :)"
                )
            }
            guard !name.contains("$(") else {
                throw KeychainError(
                    .errSecParam,
                    "\"\(name)\" holds a build variable Xcode would expand; write the value itself (for example "
                        + "TEAMID.com.example.app)"
                )
            }
        }
    }
}
