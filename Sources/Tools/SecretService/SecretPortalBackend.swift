import Crypto
import Foundation
import KeychainClient
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The Flatpak Secret portal's backend, `org.freedesktop.impl.portal.Secret` at
/// `/org/freedesktop/portal/desktop` on the bridge's `org.freedesktop.secrets` name (the name
/// gnome-keyring's `gnome-keyring.portal` routes to, so on GNOME the portal finds the keychain
/// with nothing more; elsewhere `keychain.portal` and `portals.conf` route it).
///
/// A sandboxed app asks xdg-desktop-portal (the frontend) for its secret; the frontend reads the
/// app's id from the sandbox (`/.flatpak-info`, which the app cannot write) and calls
/// `RetrieveSecret(handle, app_id, fd, options)` here. The answer is 64 random bytes made at
/// the app id's first request and the same ever after, written to `fd`: the key of the app's
/// own encrypted keyring file (libsecret's file backend).
///
/// Unlike gnome-keyring's backend, which answers any caller with any app id, this one answers
/// the frontend alone: a caller whose executable is not xdg-desktop-portal is refused, so a
/// program of the user cannot name an app id and take that app's secret. The secrets are
/// keychain items of the frontend's app (`svce` ``service``, `acct` the app id), never Secret
/// Service items: no Secret Service client sees them, and the owner does in `dump-keychain`.
/// They are `AfterFirstUnlock`, as an iOS app's key for work in the background: a sandboxed
/// app opens its keyring whenever it starts, and after the first unlock since the daemon
/// started it needs no sheet; before it, the frontend is answered 2 (failed) and the app's
/// keyring stays closed.
enum SecretPortalBackend {
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Secret"
    /// The keychain service the apps' secrets are kept under.
    static let service = "xdg-desktop-portal secret"
    /// The frontend's executable where distributions install it.
    static let frontends: Set<String> = ["/usr/libexec/xdg-desktop-portal", "/usr/lib/xdg-desktop-portal"]
    /// The secret's length, as gnome-keyring's and KDE's backends make it.
    static let secretLength = 64

    /// The answer to a call on ``path``: `RetrieveSecret`, and the interface's `version`
    /// property (1).
    static func answer(
        _ interface: String, _ member: String, _ arguments: [DBusValue], client: BusClient
    ) throws(DBusFailure) -> [DBusValue] {
        switch (interface, member) {
        case (Self.interface, "RetrieveSecret"):
            return try retrieveSecret(arguments, client: client)
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return [
                .dictionary(
                    key: "s", value: "v", [DBusDictionaryEntry(key: .string("version"), value: .variant(.uint32(1)))])
            ]
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard arguments.count == 2, arguments[1].text == "version" else {
                throw DBusFailure.invalidArguments("\(Self.interface) has the property version alone")
            }
            return [.variant(.uint32(1))]
        default:
            throw DBusFailure.unknownMethod("\(interface).\(member) is not served at \(path)")
        }
    }

    /// `RetrieveSecret(o handle, s app_id, h fd, a{sv} options) → (u response, a{sv} results)`;
    /// the descriptor is closed by the caller, once answered.
    private static func retrieveSecret(
        _ arguments: [DBusValue], client: BusClient
    ) throws(DBusFailure)
        -> [DBusValue]
    {
        guard arguments.map(\.signature).joined() == "osha{sv}", case .unixFD(let descriptor) = arguments[2] else {
            throw DBusFailure.invalidArguments("RetrieveSecret takes (o, s, h, a{sv})")
        }
        guard frontends.contains(client.executable) else {
            throw DBusFailure.accessDenied(
                "only xdg-desktop-portal may ask for an app's portal secret, not \(client.executable)")
        }
        guard let appID = arguments[1].text, isAppID(appID) else {
            throw DBusFailure.invalidArguments("RetrieveSecret needs a sandboxed app's id")
        }
        let secret: SecretBytes
        do throws(KeychainError) {
            secret = try self.secret(of: appID, through: client.transport)
        } catch {
            // Locked before the first unlock, or the keychain unreachable: the frontend's
            // "other error"; the app keeps its keyring closed.
            return [.uint32(2), .dictionary(key: "s", value: "v", [])]
        }
        let written = secret.withUnsafeBytes { bytes in writeAll(bytes, to: descriptor) }
        return [.uint32(written ? 0 : 2), .dictionary(key: "s", value: "v", [])]
    }

    /// The secret of `appID`, made and kept at its first request.
    private static func secret(
        of appID: String, through transport: any KeychainTransport
    ) throws(KeychainError)
        -> SecretBytes
    {
        let attributes: [String: AttributeValue] = [
            "svce": .string(service), "acct": .string(appID), "labl": .string("Flatpak app secret: \(appID)"),
        ]
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string(service), "acct": .string(appID)],
            returns: .data)
        do throws(KeychainError) {
            if case .items(let found) = try transport.perform(.copyMatching(query)), let secret = found.first?.secret {
                return secret
            }
        } catch  where error.status == KeychainError.errSecItemNotFound.status {}
        // Straight into SecretBytes: no Data copy of the secret is left unwiped.
        let fresh = SymmetricKey(size: SymmetricKeySize(bitCount: secretLength * 8)).withUnsafeBytes {
            SecretBytes($0)
        }
        do throws(KeychainError) {
            _ = try transport.perform(
                .add(
                    NewItem(
                        itemClass: .genericPassword, attributes: attributes, accessibility: .afterFirstUnlock,
                        secret: fresh)))
            return fresh
        } catch  where error.status == KeychainError.errSecDuplicateItem.status {
            // Two first requests at once: the one that landed is the app's.
            guard case .items(let found) = try transport.perform(.copyMatching(query)), let secret = found.first?.secret
            else { throw KeychainError(.errSecItemNotFound, "the portal secret of \(appID) vanished") }
            return secret
        }
    }

    /// A Flatpak app id: reverse-DNS, `[A-Za-z0-9_.-]`, at most 255 bytes, not empty (a host
    /// program has no id: it reaches the Secret Service itself).
    static func isAppID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255 && text.contains(".")
            && text.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0))
            }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}
