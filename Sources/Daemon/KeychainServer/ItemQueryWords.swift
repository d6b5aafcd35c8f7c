import KeychainProtocol

/// A query said in plain words for a message, by its class and the names of the attributes it
/// matches: "generic password with that service and account". Never the values: a message can
/// reach a log, and what a program looked for is its own business.
enum ItemQueryWords {
    /// `query` in words.
    static func of(_ query: ItemQuery) -> String {
        let names = query.attributes.keys.sorted().map { attributeNames[$0] ?? $0 }
        let what = classNames[query.itemClass] ?? query.itemClass.rawValue
        guard let last = names.last else { return what }
        let listed = names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " and " + last
        return "\(what) with that \(listed)"
    }

    private static let classNames: [ItemClass: String] = [
        .genericPassword: "generic password", .internetPassword: "internet password", .key: "key",
        .certificate: "certificate", .identity: "identity",
    ]

    private static let attributeNames = [
        "svce": "service", "acct": "account", "srvr": "server", "labl": "label", "agrp": "access group",
        "ptcl": "protocol", "port": "port", "path": "path", "sdmn": "security domain", "atyp": "authentication type",
        "desc": "description", "icmt": "comment", "gena": "generic attribute", "crtr": "creator", "type": "type",
        "kcls": "key class", "klbl": "application label", "atag": "application tag", "pdmn": "accessibility",
        "sync": "synchronizable setting", "cdat": "creation date", "mdat": "modification date",
    ]
}
