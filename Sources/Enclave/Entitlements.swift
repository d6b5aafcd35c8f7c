import Crypto
import Foundation
import KeychainProtocol

/// Which apps may use which shared access groups besides their own: the owner's list, kept in
/// the authenticated file `entitlements` (an edited or planted file is refused, never obeyed).
/// An app is named by its identity (in daemon mode, its executable's path).
struct Entitlements: Codable, Sendable {
    /// App identity → shared groups it may use.
    var groups: [String: [String]] = [:]

    static let fileName = "entitlements"
    static let version = 1

    /// The list; empty when the file does not exist (nothing was ever granted).
    static func load(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) -> Entitlements {
        guard let data = try files.read(fileName) else { return Entitlements() }
        return try AuthenticatedState.decode(data, as: Entitlements.self, name: fileName, version: version, deviceKey: deviceKey, path: files.path(fileName))
    }

    func save(_ files: KeychainDirectory, deviceKey: SymmetricKey) throws(KeychainError) {
        try files.writeAtomically(AuthenticatedState.encode(self, name: Self.fileName, version: Self.version, deviceKey: deviceKey), to: Self.fileName)
    }
}

extension Enclave {
    /// The shared groups granted to each app.
    ///
    /// - Throws: `errSecDecode` when the file was altered or belongs to another keychain.
    public func entitlements() throws(KeychainError) -> [String: [String]] {
        try withStateLock { () throws(KeychainError) in try Entitlements.load(files, deviceKey: deviceKey).groups }
    }

    /// Lets `app` use `group` (`granted`) or no longer (`!granted`). The caller checks that the
    /// owner asked.
    public func setEntitlement(app: String, group: String, granted: Bool) throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            var entitlements = try Entitlements.load(files, deviceKey: deviceKey)
            var groups = Set(entitlements.groups[app] ?? [])
            if granted { groups.insert(group) } else { groups.remove(group) }
            entitlements.groups[app] = groups.isEmpty ? nil : groups.sorted()
            try entitlements.save(files, deviceKey: deviceKey)
        }
    }
}
