/// One Secret Service item a bridge's search found (``KeychainRequest/searchSecretItems(_:)``):
/// its keychain `svce` (`secret-service:COLLECTION`) and `acct` (its id), which make its D-Bus
/// path, and whether the caller may read it: its own, or another app's the owner let it read.
/// Nothing else of the item travels: a search lists paths.
public struct SecretItemMatch: Sendable, Hashable {
    public var service: String
    public var account: String
    public var readable: Bool

    /// A match of `service` and `account`.
    public init(service: String, account: String, readable: Bool) {
        self.service = service
        self.account = account
        self.readable = readable
    }
}
