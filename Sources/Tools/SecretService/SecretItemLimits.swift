import KeychainProtocol

/// What one Secret Service item may hold, checked before anything reaches keychaind: the
/// keychain's limits (``KeychainLimits``) as the Secret Service's client sees its item. One byte
/// over answers `InvalidArgs`, saying the limit in words (the specification sets none; these are
/// above what gnome-keyring's clients store).
enum SecretItemLimits {
    /// The most attributes of one item.
    static let maximumAttributes = 256
    /// The longest attribute name, in bytes.
    static let maximumName = 1 << 10

    /// Checks what a write sets: `label`, `attributes` and `secret`, each when given.
    static func check(label: String?, attributes: [String: String]?, secret: SecretValue?) throws(DBusFailure) {
        if let secret, secret.bytes.count > KeychainLimits.maximumSecretSize {
            throw DBusFailure.invalidArguments(
                "a secret holds at most \(KeychainLimits.secretSizeInWords) "
                    + "(\(KeychainLimits.maximumSecretSize) bytes); this one has \(secret.bytes.count)")
        }
        if let label, label.utf8.count > KeychainLimits.maximumAttributeSize {
            throw DBusFailure.invalidArguments(
                "a label holds at most 64 KiB (\(KeychainLimits.maximumAttributeSize) bytes)")
        }
        guard let attributes else { return }
        guard attributes.count <= maximumAttributes else {
            throw DBusFailure.invalidArguments(
                "an item has at most \(maximumAttributes) attributes; this one has \(attributes.count)")
        }
        var total = 0
        for (name, value) in attributes {
            guard name.utf8.count <= maximumName else {
                throw DBusFailure.invalidArguments("an attribute's name holds at most 1 KiB (\(maximumName) bytes)")
            }
            guard value.utf8.count <= KeychainLimits.maximumAttributeSize else {
                throw DBusFailure.invalidArguments(
                    "an attribute's value holds at most 64 KiB (\(KeychainLimits.maximumAttributeSize) bytes)")
            }
            total += name.utf8.count + value.utf8.count
        }
        // The keychain's own attributes of the item (its collection, id, label, content type)
        // count toward its total too: what is left for these.
        let room = KeychainLimits.maximumAttributesTotal - KeychainLimits.maximumAttributeSize - 1024
        guard total <= room else {
            throw DBusFailure.invalidArguments(
                "an item's attributes hold at most \(room) bytes together; these take \(total)")
        }
    }
}
