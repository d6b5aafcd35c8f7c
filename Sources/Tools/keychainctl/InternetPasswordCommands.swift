import ArgumentParser
import Foundation
import Keychain

/// The options that identify an internet password when searching: all optional.
struct InternetPasswordOptions: ParsableArguments {
    @Option(name: .customShort("s"), help: .server)
    var server: String?
    @Option(name: .customShort("a"), help: .account)
    var account: String?
    @OptionGroup var details: InternetPasswordDetails

    var attributes: [String: AttributeValue] {
        details.attributes.merging(
            ItemCommands.attributes([(kSecAttrServer as String, server), (kSecAttrAccount as String, account)])
        ) { a, _ in a }
    }
}

/// The parts of an internet password's key besides server and account.
struct InternetPasswordDetails: ParsableArguments {
    @Option(
        name: .customShort("r"),
        help: ArgumentHelp(
            "Protocol: a name (https, ssh) or Apple's four-character code (htps).", valueName: "protocol"))
    var protocolCode: ProtocolCode?
    @Option(name: .customShort("P"), help: ArgumentHelp("Port (kSecAttrPort as String).", valueName: "port")) var port:
        Int?
    @Option(name: .customShort("p"), help: ArgumentHelp("Path (kSecAttrPath as String).", valueName: "path")) var path:
        String?

    var attributes: [String: AttributeValue] {
        var attributes = ItemCommands.attributes([
            (kSecAttrProtocol as String, protocolCode?.code), (kSecAttrPath as String, path),
        ])
        if let port { attributes[kSecAttrPort as String] = .number(Int64(port)) }
        return attributes
    }
}

struct AddInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an internet password; the secret is read from standard input or a hidden prompt.")
    @Option(name: .customShort("s"), help: .server)
    var server: String
    @Option(name: .customShort("a"), help: .account)
    var account: String
    @OptionGroup var details: InternetPasswordDetails
    @Option(name: .customShort("l"), help: .label)
    var label: String?
    @Option(name: .customShort("j"), help: .comment)
    var comment: String?
    @Option(help: "Accessibility, e.g. WhenUnlocked, AfterFirstUnlock.") var accessible: Accessibility?
    @Flag(name: .customShort("U"), help: "Update the item if it already exists.") var update = false
    @Flag(help: "Accept an empty secret (refused otherwise, as an empty standard input is nearly always a mistake).")
    var allowEmpty = false
    @Option(name: .customShort("w"), help: .hidden) var secretInArguments: String?

    func validate() throws {
        if secretInArguments != nil { throw ValidationError(ItemCommands.secretsNeverInArguments) }
    }

    func run() throws {
        let key = details.attributes.merging(
            ItemCommands.attributes([(kSecAttrServer as String, server), (kSecAttrAccount as String, account)])
        ) { a, _ in a }
        try KeychainCommand.run {
            let item = NewItem(
                itemClass: .internetPassword,
                attributes: key.merging(
                    ItemCommands.attributes([(kSecAttrLabel as String, label), (kSecAttrComment as String, comment)])
                ) { a, _ in a },
                accessibility: accessible, secret: try SecretInput.itemSecret(allowEmpty: allowEmpty))
            try ItemCommands.add(item, updateExisting: update, key: key)
        }
    }
}

struct FindInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find an internet password; print its attributes, or with -w only its secret.")
    @OptionGroup var key: InternetPasswordOptions
    @Flag(name: .customShort("w"), help: "Print only the secret.") var secretOnly = false

    func run() throws {
        try KeychainCommand.runIdentifiedByFirstRequest { firstReplyCame in
            try ItemCommands.find(
                ItemQuery(itemClass: .internetPassword, attributes: key.attributes), secretOnly: secretOnly,
                firstReplyCame: firstReplyCame)
        }
    }
}

struct DeleteInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the internet password that matches; several only with --all.")
    @OptionGroup var key: InternetPasswordOptions
    @Flag(help: "Delete every match, and say how many.") var all = false

    func run() throws {
        try KeychainCommand.run {
            try ItemCommands.delete(ItemQuery(itemClass: .internetPassword, attributes: key.attributes), all: all)
        }
    }
}

struct DumpKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print every item's class and attributes; never secrets.")

    func run() throws {
        try KeychainCommand.run {
            var blocks: [String] = []
            for itemClass in ItemClass.allCases where itemClass.isImplemented {
                let query = ItemQuery(itemClass: itemClass, synchronizable: .any, limit: .all, returns: .attributes)
                do {
                    guard case .items(let items) = try ProcessKeychain.perform(.copyMatching(query)) else { continue }
                    blocks += items.map(ItemPrinter.render)
                } catch KeychainError.errSecItemNotFound {
                    continue
                }
            }
            if !blocks.isEmpty { print(blocks.joined(separator: "\n")) }
        }
    }
}
