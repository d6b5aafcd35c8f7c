import KeychainProtocol

/// An item object given as `kSecValueRef`: the certificate or key an item holds.
enum ItemReference {
    case certificate(SecCertificate)
    case key(SecKey)

    /// The class of the item that holds it.
    var itemClass: ItemClass {
        switch self {
        case .certificate: .certificate
        case .key: .key
        }
    }

    /// Apple's name of its type, for messages.
    var typeName: String {
        switch self {
        case .certificate: "SecCertificate"
        case .key: "SecKey"
        }
    }

    /// The attributes that name the item holding it (see each type's `identifyingAttributes`).
    var identifyingAttributes: [String: AttributeValue] {
        switch self {
        case .certificate(let certificate): certificate.identifyingAttributes
        case .key(let key): key.identifyingAttributes
        }
    }
}
