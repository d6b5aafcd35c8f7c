import ArgumentParser
import Foundation
import Keychain

/// What the add, find and delete commands share: building a query from options, adding with
/// an optional update, and printing.
enum ItemCommands {
    static func add(_ item: NewItem, updateExisting: Bool, key: [String: AttributeValue]) throws {
        do {
            _ = try ProcessKeychain.perform(.add(item))
        } catch {
            guard updateExisting, error.status == KeychainError.errSecDuplicateItem.status else { throw error }
            let query = ItemQuery(
                itemClass: item.itemClass, attributes: key, synchronizable: item.synchronizable ? .yes : .no)
            var changes = ItemChanges(
                attributes: item.attributes, accessibility: item.accessibility, secret: item.secret)
            changes.accessControl = item.accessControl
            // Updating an item with an access control prompts, as the KeychainTouchID sample does.
            _ = try ProcessKeychain.perform(
                .update(query, changes),
                authenticating: AuthenticationOptions(reason: "Authenticate to update your password"))
        }
    }

    /// What `-w SECRET` (the habit from macOS's `security`) gets on an add.
    static let secretsNeverInArguments =
        "keychainctl never takes a secret from its arguments, where `ps` and your shell history would show it: "
        + "pipe it in (printf %s \"$SECRET\" | keychainctl add-generic-password -s <service> -a <account>) or type "
        + "it at the hidden prompt"

    /// The line end after a secret. A constant: `Data("\n".utf8)` asked the runtime whether a
    /// string's UTF-8 view is contiguous bytes, a search of every protocol conformance in the
    /// program on its first use (a twentieth of a whole lookup's instructions).
    private static let newline = Data([0x0A])

    /// Prints the first item `query` matches, after saying how many match when several do.
    ///
    /// It asks first whether several match: a search for two references, which carries no
    /// secret and which keychaind answers at once. Only when two come back is
    /// every match counted. ``KeychainCommand/runIdentifiedByFirstRequest(_:)`` hardens the process on
    /// that first reply (`firstReplyCame`), before the item is read.
    static func find(_ query: ItemQuery, secretOnly: Bool, firstReplyCame: () -> Void) throws {
        var count = query
        count.limit = .count(2)
        count.returns = .persistentRef
        let firstTwo: KeychainReply
        do {
            defer { firstReplyCame() }
            firstTwo = try ProcessKeychain.perform(.copyMatching(count))
        }
        if case .items(let matches) = firstTwo, matches.count > 1 {
            count.limit = .all
            // Should the full count not come back as items, two is what is known to match.
            let all =
                if case .items(let everyMatch) = try ProcessKeychain.perform(.copyMatching(count)) {
                    everyMatch.count
                } else { matches.count }
            KeychainCommand.note("\(all) items match; showing the first (narrow the search with -s and -a)")
        }
        var query = query
        query.returns = secretOnly ? .data : .attributes
        let options = AuthenticationOptions(reason: "Authenticate to access service password")
        guard case .items(let items) = try ProcessKeychain.perform(.copyMatching(query), authenticating: options),
            let item = items.first
        else { return }
        if secretOnly {
            var data = item.secret?.copyData() ?? Data()
            defer { data.resetBytes(in: 0..<data.count) }
            FileHandle.standardOutput.write(data)
            FileHandle.standardOutput.write(newline)
        } else {
            print(ItemPrinter.render(item))
        }
    }

    /// Deletes what `query` matches: one item, or several only with `all` (a query with no
    /// service or account matches every item of its class). Prints how many with `all`.
    static func delete(_ query: ItemQuery, all: Bool) throws {
        if !all {
            var count = query
            count.limit = .all
            count.returns = .persistentRef
            if case .items(let matches) = try ProcessKeychain.perform(.copyMatching(count)), matches.count > 1 {
                throw KeychainError(
                    .errSecParam,
                    "\(matches.count) items match; nothing was deleted. Narrow the search with -s and -a, or add "
                        + "--all to delete all \(matches.count)"
                )
            }
        }
        guard case .count(let deleted) = try ProcessKeychain.perform(.delete(query)) else { return }
        if all { KeychainCommand.note("deleted \(deleted) item\(deleted == 1 ? "" : "s")") }
    }

    static func attributes(_ pairs: [(String, String?)]) -> [String: AttributeValue] {
        var attributes: [String: AttributeValue] = [:]
        for (name, value) in pairs {
            if let value { attributes[name] = .string(value) }
        }
        return attributes
    }
}

struct AddGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a generic password; the secret is read from standard input or a hidden prompt.")
    @Option(name: .customShort("s"), help: .service) var service: String
    @Option(name: .customShort("a"), help: .account) var account: String
    @Option(name: .customShort("l"), help: .label) var label: String?
    @Option(name: .customShort("j"), help: .comment) var comment: String?
    @Option(
        help: ArgumentHelp(
            "Access group (kSecAttrAccessGroup as String): a shared group this program is entitled to; default its "
                + "own.",
            valueName: "group"))
    var accessGroup: String?
    @Option(help: "Accessibility, e.g. WhenUnlocked, AfterFirstUnlock, WhenPasscodeSetThisDeviceOnly.") var accessible:
        Accessibility?
    @Option(
        help: ArgumentHelp(
            "Require the device owner to read it: userPresence, biometryAny, biometryCurrentSet, devicePasscode, "
                + "or combinations like biometryAny,or,devicePasscode (with --accessible, default "
                + "WhenPasscodeSetThisDeviceOnly).")
    )
    var accessControl: AccessControlArgument?
    @Flag(name: .customShort("U"), help: "Update the item if it already exists.") var update = false
    @Flag(
        help: ArgumentHelp(
            "Sync it to your other machines (kSecAttrSynchronizable; `keychainctl sync`); with a ThisDeviceOnly "
                + "accessibility it stays on this one, as on iOS, and an access control refuses it."))
    var synchronizable = false
    @Flag(help: "Accept an empty secret (refused otherwise, as an empty standard input is nearly always a mistake).")
    var allowEmpty = false
    @Option(name: .customShort("w"), help: .hidden) var secretInArguments: String?

    func validate() throws {
        if secretInArguments != nil { throw ValidationError(ItemCommands.secretsNeverInArguments) }
    }

    func run() throws {
        try KeychainCommand.run {
            let key = ItemCommands.attributes([
                (kSecAttrService as String, service), (kSecAttrAccount as String, account),
            ])
            var item = NewItem(
                itemClass: .genericPassword,
                attributes: key.merging(
                    ItemCommands.attributes([(kSecAttrLabel as String, label), (kSecAttrComment as String, comment)])
                ) { a, _ in a },
                accessibility: accessible, secret: try SecretInput.itemSecret(allowEmpty: allowEmpty))
            item.accessGroup = accessGroup
            item.synchronizable = synchronizable
            if let accessControl {
                item.accessControl = try AccessControl(
                    protection: accessible ?? .whenPasscodeSetThisDeviceOnly, flags: accessControl.flags)
                item.accessibility = nil
            }
            try ItemCommands.add(item, updateExisting: update, key: key)
        }
    }
}

struct FindGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find a generic password, synchronizable or not; print its attributes, or with -w only its secret.")
    @Option(name: .customShort("s"), help: .service) var service: String?
    @Option(name: .customShort("a"), help: .account) var account: String?
    @Option(
        help: ArgumentHelp(
            "Look only in this access group (kSecAttrAccessGroup as String); default every group of this program.",
            valueName: "group"))
    var accessGroup: String?
    @Flag(name: .customShort("w"), help: "Print only the secret.") var secretOnly = false

    func run() throws {
        try GenericPasswordLookup(service: service, account: account, accessGroup: accessGroup, secretOnly: secretOnly)
            .run()
    }
}

struct DeleteGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the generic password that matches, synchronizable or not; several only with --all.")
    @Option(name: .customShort("s"), help: .service)
    var service: String?
    @Option(name: .customShort("a"), help: .account)
    var account: String?
    @Flag(help: "Delete every match, and say how many.") var all = false

    func run() throws {
        try KeychainCommand.run {
            let attributes = ItemCommands.attributes([
                (kSecAttrService as String, service), (kSecAttrAccount as String, account),
            ])
            try ItemCommands.delete(
                ItemQuery(itemClass: .genericPassword, attributes: attributes, synchronizable: .any), all: all)
        }
    }
}
