/// A keychain item class (`kSecClass` values), with Apple's raw strings.
public enum ItemClass: String, Sendable, CaseIterable, Codable {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case key = "keys"
    case certificate = "cert"
    case identity = "idnt"

    /// False for the class that is not stored as such (identity: the Security module keeps an
    /// identity as a certificate item and a key item); the store refuses it with
    /// `errSecUnimplemented`.
    public var isImplemented: Bool {
        switch self {
        case .genericPassword, .internetPassword, .key, .certificate: true
        case .identity: false
        }
    }

    /// The attributes an item of this class can carry, by Apple's raw attribute name, with
    /// Apple's type for each, excluding the ones every class has (access group, accessibility,
    /// synchronizable, dates).
    public var attributes: [String: AttributeType] {
        switch self {
        case .genericPassword: Self.genericPasswordAttributes
        case .internetPassword: Self.internetPasswordAttributes
        case .key: Self.keyAttributes
        case .certificate: Self.certificateAttributes
        case .identity: [:]
        }
    }

    /// The name prefix of a Secret Service attribute (`org.freedesktop.Secret.Item.Attributes`)
    /// on a generic password: attribute `xdg:schema` is kept as `ss:xdg:schema`. Not Apple's:
    /// Apple's raw names have no colon, so none can clash. Its value is a string, sealed with
    /// the item's other attributes and indexed by keyed hash like them, so a search matches it
    /// exactly (case and all) without anything of it in clear on disk.
    public static let secretServiceAttributePrefix = "ss:"

    /// The attribute of a Secret Service item that keeps its secret's content type
    /// (`text/plain`, `application/octet-stream`): `gena` (`kSecAttrGeneric`), a string.
    public static let secretServiceContentTypeAttribute = "gena"

    /// The type of attribute `name` on an item of this class: Apple's (``attributes``), or a
    /// string for a Secret Service attribute of a generic password; nil for any other name.
    public func attributeType(_ name: String) -> AttributeType? {
        if let type = attributes[name] { return type }
        if self == .genericPassword, name.hasPrefix(Self.secretServiceAttributePrefix) { return .string }
        return nil
    }

    /// Apple's composite primary key for the class, besides access group and synchronizable
    /// (which belong to every class's key). Two items with equal values here clash with
    /// `errSecDuplicateItem`. An absent primary-key attribute takes its type's empty value.
    ///
    /// Apple documentation: <https://developer.apple.com/documentation/security/errsecduplicateitem>
    public var primaryKey: [String] {
        switch self {
        case .genericPassword: ["acct", "svce"]
        case .internetPassword: ["acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path"]
        case .key: ["kcls", "type", "klbl", "atag", "bsiz", "esiz"]
        case .certificate, .identity: ["ctyp", "issr", "slnr"]
        }
    }

    // Apple's types (SecItemSchema.c), except `invi` and `nega`, Numbers there, kept as booleans
    // (what kSecAttrIsInvisible and kSecAttrIsNegative take), and `ptcl`, a Number there whose
    // kSecAttrProtocol… constants are non-numeric strings, which a Number keeps as strings.
    private static let passwordCommon: [String: AttributeType] = [
        "desc": .blob, "icmt": .blob, "crtr": .number, "type": .number, "labl": .blob,
        "invi": .bool, "nega": .bool,
    ]
    // Built once: every query and every opened row looks names up here.
    private static let genericPasswordAttributes = passwordCommon.merging(["acct": .blob, "svce": .blob, "gena": .blob])
    { a, _ in a }
    private static let internetPasswordAttributes = passwordCommon.merging([
        "acct": .blob, "sdmn": .blob, "srvr": .blob, "ptcl": .string, "atyp": .blob,
        "port": .number, "path": .blob,
    ]) { a, _ in a }
    // Keys keep this version's types (kSecAttrKeyClass and kSecAttrKeyType as their constants'
    // strings) until SecKey arrives with Apple's Number forms.
    // A certificate's attributes come from the certificate (SecCertificate derives them); the
    // label is the user's to change.
    private static let certificateAttributes: [String: AttributeType] = [
        "ctyp": .number, "cenc": .number, "labl": .blob, "subj": .data, "issr": .data, "slnr": .data,
        "skid": .data, "pkhh": .data,
    ]
    private static let keyAttributes: [String: AttributeType] = [
        "kcls": .string, "labl": .string, "klbl": .data, "atag": .data, "type": .string,
        "bsiz": .number, "esiz": .number, "perm": .bool, "encr": .bool, "decr": .bool,
        "drve": .bool, "sign": .bool, "vrfy": .bool, "wrap": .bool, "unwp": .bool,
        // kSecAttrTokenID: kSecAttrTokenIDSecureEnclave marks a key whose data is sealed to the Enclave.
        "tkid": .string,
    ]
}

/// Raw names of the attributes every item has, kept apart from the class schema.
public enum CommonAttribute {
    public static let accessGroup = "agrp"
    public static let accessible = "pdmn"
    public static let synchronizable = "sync"
    public static let creationDate = "cdat"
    public static let modificationDate = "mdat"
}
