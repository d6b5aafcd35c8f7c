/// Size limits on what the keychain stores. The keychain is for small secrets; bigger data
/// belongs in a file encrypted with a key kept here.
public enum KeychainLimits {
    /// The largest secret (`kSecValueData`): 16 KiB. Larger values fail with
    /// `errSecDataTooLarge` (-25302).
    public static let maximumSecretSize = 16 * 1024
    /// The largest single attribute value (string bytes or data): 4 KiB.
    public static let maximumAttributeSize = 4 * 1024
    /// The largest number of attributes on one item or in one query.
    public static let maximumAttributeCount = 64
    /// The most persistent references one `kSecMatchItemList` holds.
    public static let maximumItemList = 1_000
}
