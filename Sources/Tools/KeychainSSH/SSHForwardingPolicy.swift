import Foundation
import Keychain

/// What a key does when it is asked to sign over a forwarded agent connection: one on which
/// the local ssh said, with `session-bind@openssh.com`, that it forwards the agent to a host,
/// so that the request comes from a program on that host (``SSHAgentConnection``). The owner sets
/// it per key (`keychainctl ssh forwarding NAME POLICY`), kept as a generic password of
/// keychainctl's (service `com.swift-keychain.ssh.forwarding`, the key's name as account).
///
/// The defaults follow OpenSSH's destination constraints (`ssh-add -h`): a key with an access
/// control is refused to forwarded use until the owner says otherwise; a key without one signs,
/// as OpenSSH's agent signs for any forwarded request.
public enum SSHForwardingPolicy: String, CaseIterable, Sendable {
    /// Signs as it would for a local program: the default of a key without an access control;
    /// not for a key with one.
    case allow
    /// Shows the sheet at every forwarded signature, naming the hosts, and keeps no
    /// authentication for later ones (no reuse window).
    case ask
    /// Refuses every forwarded signature: the default of a key with an access control.
    case refuse

    static let service = "com.swift-keychain.ssh.forwarding"

    /// The policy of `key`: the one the owner set, else its default. A setting that cannot be
    /// read (but for none being set) refuses.
    static func of(_ key: SSHEnclaveKey) -> SSHForwardingPolicy {
        let set: SSHForwardingPolicy?
        do {
            set = try stored(key.name)
        } catch {
            return .refuse
        }
        let policy = set ?? (key.requiresAuthentication ? .refuse : .allow)
        return policy == .allow && key.requiresAuthentication ? .ask : policy
    }

    /// The policy of the key named `name`.
    ///
    /// - Throws: errSecItemNotFound when no key has that name.
    public static func current(for name: String) throws -> SSHForwardingPolicy {
        guard let key = try SSHKeyStore.find(name) else { throw noKey(name) }
        return of(key)
    }

    /// Sets the policy of the key named `name`.
    ///
    /// - Throws: errSecItemNotFound when no key has that name; errSecParam for `allow` on a key
    ///   with an access control, which asks at every forwarded use at least.
    public static func set(_ policy: SSHForwardingPolicy, for name: String) throws {
        guard let key = try SSHKeyStore.find(name) else { throw noKey(name) }
        guard policy != .allow || !key.requiresAuthentication else {
            throw KeychainError(
                .errSecParam,
                "\(name) has an access control: over a forwarded connection it asks at every use (ask) or refuses "
                    + "(refuse)")
        }
        remove(for: name)
        let status = SecItemAdd(
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: name, kSecValueData as String: Data(policy.rawValue.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
            ] as CFDictionary, nil)
        guard status == errSecSuccess else {
            throw KeychainError(status: status, message: "the forwarding policy of \(name) could not be kept")
        }
    }

    /// Forgets the policy set for the key named `name`, if any.
    static func remove(for name: String) {
        SecItemDelete(
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: name,
            ] as CFDictionary)
    }

    private static func stored(_ name: String) throws -> SSHForwardingPolicy? {
        var result: AnyObject?
        let status = SecItemCopyMatching(
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: name, kSecReturnData as String: true,
            ] as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data,
            let policy = SSHForwardingPolicy(rawValue: String(decoding: data, as: UTF8.self))
        else { throw KeychainError(status: status, message: "the forwarding policy of \(name) could not be read") }
        return policy
    }

    private static func noKey(_ name: String) -> KeychainError {
        KeychainError(.errSecItemNotFound, "no SSH key is named \(name)")
    }
}
