import ArgumentParser
import Foundation
import Keychain

/// The options that identify an internet password.
struct InternetPasswordOptions: ParsableArguments {
    @Option(name: .customShort("s"), help: "Server (kSecAttrServer).") var server: String?
    @Option(name: .customShort("a"), help: "Account (kSecAttrAccount).") var account: String?
    @Option(name: .customShort("r"), help: "Protocol: a name (https, ssh) or Apple's four-character code (htps).") var protocolCode: ProtocolCode?
    @Option(name: .customShort("P"), help: "Port (kSecAttrPort).") var port: Int?
    @Option(name: .customShort("p"), help: "Path (kSecAttrPath).") var path: String?

    var attributes: [String: AttributeValue] {
        var attributes = ItemCommands.attributes([
            (kSecAttrServer, server), (kSecAttrAccount, account), (kSecAttrProtocol, protocolCode?.code), (kSecAttrPath, path),
        ])
        if let port { attributes[kSecAttrPort] = .number(Int64(port)) }
        return attributes
    }
}

struct AddInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an internet password; the secret is read from standard input or a hidden prompt.")
    @OptionGroup var key: InternetPasswordOptions
    @Option(name: .customShort("l"), help: "Label (kSecAttrLabel).") var label: String?
    @Option(name: .customShort("j"), help: "Comment (kSecAttrComment).") var comment: String?
    @Option(help: "Accessibility, e.g. WhenUnlocked, AfterFirstUnlock.") var accessible: Accessibility?
    @Flag(name: .customShort("U"), help: "Update the item if it already exists.") var update = false
    @Flag(help: "Accept an empty secret (refused otherwise, as an empty standard input is nearly always a mistake).") var allowEmpty = false

    func validate() throws {
        guard key.server != nil, key.account != nil else { throw ValidationError("add-internet-password needs -s SERVER and -a ACCOUNT") }
    }

    func run() throws {
        try Session.run {
            let item = NewItem(
                itemClass: .internetPassword,
                attributes: key.attributes.merging(ItemCommands.attributes([(kSecAttrLabel, label), (kSecAttrComment, comment)])) { a, _ in a },
                accessibility: accessible, secret: try SecretInput.itemSecret(allowEmpty: allowEmpty))
            try ItemCommands.add(item, updateExisting: update, key: key.attributes)
        }
    }
}

struct FindInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Find an internet password; print its attributes, or with -w only its secret.")
    @OptionGroup var key: InternetPasswordOptions
    @Flag(name: .customShort("w"), help: "Print only the secret.") var secretOnly = false

    func run() throws {
        try Session.run { try ItemCommands.find(ItemQuery(itemClass: .internetPassword, attributes: key.attributes), secretOnly: secretOnly) }
    }
}

struct DeleteInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete the internet password that matches; several only with --all.")
    @OptionGroup var key: InternetPasswordOptions
    @Flag(help: "Delete every match, and say how many.") var all = false

    func run() throws {
        try Session.run { try ItemCommands.delete(ItemQuery(itemClass: .internetPassword, attributes: key.attributes), all: all) }
    }
}

struct DumpKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print every item's class and attributes; never secrets.")

    func run() throws {
        try Session.run {
            var blocks: [String] = []
            for itemClass in ItemClass.allCases where itemClass.isImplemented {
                let query = ItemQuery(itemClass: itemClass, synchronizable: .any, limit: .all, returns: .attributes)
                do {
                    guard case .items(let items) = try KeychainServices.perform(.copyMatching(query)) else { continue }
                    blocks += items.map(ItemPrinter.render)
                } catch KeychainError.errSecItemNotFound {
                    continue
                }
            }
            if !blocks.isEmpty { print(blocks.joined(separator: "\n")) }
        }
    }
}
