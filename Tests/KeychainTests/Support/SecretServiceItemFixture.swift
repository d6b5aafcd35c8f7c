import Keychain

/// A Secret Service item as the bridge adds it (`KeychainSecretItems`): a generic password in the
/// login collection, its id as the account and label, one `xdg:schema` attribute, the content type
/// `text/plain`, WhenUnlocked.
func secretServiceItem(_ id: String, schema: String) -> NewItem {
    NewItem(
        itemClass: .genericPassword,
        attributes: [
            "svce": .string("secret-service:login"), "acct": .string(id), "labl": .string(id),
            "ss:xdg:schema": .string(schema), "gena": .string("text/plain"),
        ], accessibility: .whenUnlocked, secret: SecretBytes(utf8: "secret of \(id)"))
}
