/// One Secret Service item a bridge's search found (``KeychainRequest/searchSecretItems(_:)``):
/// its keychain `svce` (`secret-service:COLLECTION`) and `acct` (its id), which make its D-Bus
/// path, whether the caller may read it (its own, or another app's the owner let it read), and,
/// for one it may read, its label (and, for the caller's own, its secret's content type) when
/// keychaind had them at hand. Nothing else of the item travels: a search lists paths.
public struct SecretItemMatch: Sendable, Hashable {
    public var service: String
    public var account: String
    public var readable: Bool
    /// The item's label (`labl`), sent only for a readable item that keychaind opened under the
    /// class key open now, by this search or an earlier one; nil otherwise. Clients read an
    /// item's `Label` right after they find it (secretstorage does, to make its `Item`), and
    /// the bridge answers that from here without asking keychaind again.
    public var label: String?
    /// The content type of the item's secret
    /// (``ItemClass/secretServiceContentTypeAttribute``), sent as the label is, for the caller's
    /// own items only; nil otherwise. A client asks for the secret of the item it found next,
    /// and the bridge then asks keychaind for the secret alone, not for every attribute.
    public var contentType: String?

    /// A match of `service` and `account`.
    public init(service: String, account: String, readable: Bool, label: String? = nil, contentType: String? = nil) {
        self.service = service
        self.account = account
        self.readable = readable
        self.label = label
        self.contentType = contentType
    }
}
