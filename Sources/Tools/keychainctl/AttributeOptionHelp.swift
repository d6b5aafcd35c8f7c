import ArgumentParser

/// The help of the options that name an item's attributes, the same in every command that takes
/// them: each says which `kSecAttr…` key it sets.
extension ArgumentHelp {
    static var service: ArgumentHelp { attribute("Service", "kSecAttrService", "service") }
    static var account: ArgumentHelp { attribute("Account", "kSecAttrAccount", "account") }
    static var label: ArgumentHelp { attribute("Label", "kSecAttrLabel", "label") }
    static var comment: ArgumentHelp { attribute("Comment", "kSecAttrComment", "comment") }
    static var server: ArgumentHelp { attribute("Server", "kSecAttrServer", "server") }

    private static func attribute(_ name: String, _ key: String, _ value: String) -> ArgumentHelp {
        ArgumentHelp("\(name) (\(key) as String).", valueName: value)
    }
}
