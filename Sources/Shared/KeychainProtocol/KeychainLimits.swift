/// Size limits on what the keychain stores: room for what the clients of the Secret Service
/// store (gnome-keyring takes secrets of a mebibyte, values of thousands of characters and
/// hundreds of attributes, and the specification sets no limit), and a bound on every request.
///
/// One set of limits for every item, the Swift API's included: an item added through the
/// Secret Service is read through `SecItemCopyMatching` as well, and iOS documents no smaller
/// limit (what it enforces is UNCONFIRMED). Larger data belongs in a file encrypted with a key
/// kept here.
public enum KeychainLimits {
    /// The largest secret (`kSecValueData`): 1 MiB. Larger values fail with
    /// `errSecDataTooLarge` (-25302).
    public static let maximumSecretSize = 1 << 20
    /// The largest single attribute value (string bytes or data): 64 KiB.
    public static let maximumAttributeSize = 64 << 10
    /// The longest attribute name: 1 KiB, and room for a Secret Service attribute's prefix
    /// (``ItemClass/secretServiceAttributePrefix``).
    public static let maximumAttributeName = (1 << 10) + 16
    /// The largest number of attributes on one item or in one query: 256 of the Secret
    /// Service's, and the keychain's own.
    public static let maximumAttributeCount = 300
    /// The most bytes one item's attribute values and names take together: 1 MiB.
    public static let maximumAttributesTotal = 1 << 20
    /// The most persistent references one `kSecMatchItemList` holds.
    public static let maximumItemList = 1_000

    /// ``maximumSecretSize`` in words, for messages.
    public static let secretSizeInWords = "1 MiB"
}
