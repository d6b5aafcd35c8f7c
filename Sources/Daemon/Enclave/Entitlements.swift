import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

/// What the owner decided about apps, kept in the authenticated file `entitlements` (an edited
/// or planted file is refused, never obeyed): which shared access groups each app may use
/// besides its own, and what each declared app is (``AppDeclaration``). An app is named by its
/// identity (in daemon mode, its executable's path).
public struct Entitlements: Codable, Sendable {
    /// App identity → shared groups it may use.
    public var groups: [String: [String]] = [:]
    /// App identity → what it is declared to be. Optional in the file, which keychains made
    /// before declarations do not have.
    private var declared: [String: AppDeclaration]?

    static let fileName = "entitlements"
    static let version = 1

    /// App identity → what it is declared to be.
    public var declarations: [String: AppDeclaration] {
        get { declared ?? [:] }
        set { declared = newValue }
    }

    /// The access groups of `app`, the default first. A declared app has its declared groups
    /// (``AppDeclaration/accessGroups``), then the shared groups granted to it, then its own
    /// identity's group, where what it stored before the declaration stays. Any other app has
    /// its own group, then the shared ones. A leave to read one item of another app
    /// (``SecretServiceItemGrant``) is not a group.
    public func accessGroups(forApp app: String) -> [String] {
        var result = declarations[app]?.accessGroups ?? [app]
        for group in (groups[app] ?? []) + [app]
        where !result.contains(group) && !group.hasPrefix(SecretServiceItemGrant.prefix) {
            result.append(group)
        }
        return result
    }

    /// The other apps' Secret Service items the owner let `app` read for good.
    public func itemGrants(forApp app: String) -> Set<SecretServiceItemGrant> {
        Set((groups[app] ?? []).compactMap(SecretServiceItemGrant.init(entitlement:)))
    }

    /// The list; empty when the file does not exist (nothing was ever granted).
    static func load(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) -> Entitlements {
        guard let data = try files.read(fileName) else { return Entitlements() }
        return try AuthenticatedState.decode(
            data, as: Entitlements.self, name: fileName, version: version, deviceKey: deviceKey,
            path: files.path(fileName))
    }

    func save(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) {
        try files.writeAtomically(
            AuthenticatedState.encode(self, name: Self.fileName, version: Self.version, deviceKey: deviceKey),
            to: Self.fileName)
    }
}

extension Enclave {
    /// The owner's decisions about apps.
    ///
    /// - Throws: `errSecDecode` when the file was altered or belongs to another keychain.
    public func entitlements() throws(KeychainError) -> Entitlements {
        try withStateLock { () throws(KeychainError) in try Entitlements.load(files, deviceKey: deviceKey) }
    }

    /// Records the owner's change (the caller checks that the owner asked and that the change
    /// is valid).
    public func changeEntitlements(_ change: EntitlementsChange) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            var entitlements = try Entitlements.load(files, deviceKey: deviceKey)
            switch change {
            case .grant(let app, let group, let granted):
                var groups = Set(entitlements.groups[app] ?? [])
                if granted { groups.insert(group) } else { groups.remove(group) }
                entitlements.groups[app] = groups.isEmpty ? nil : groups.sorted()
            case .declare(let app, let declaration):
                entitlements.declarations[app] = declaration
            }
            try entitlements.save(files, deviceKey: deviceKey)
        }
    }
}
