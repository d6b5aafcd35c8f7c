import ArgumentParser
import Foundation
import Keychain

/// What the add, find and delete commands share: building a query from options, adding with
/// an optional update, and printing.
enum ItemCommands {
    static func add(_ item: NewItem, updateExisting: Bool, key: [String: AttributeValue]) throws {
        do {
            _ = try KeychainServices.perform(.add(item))
        } catch {
            guard updateExisting, error.status == KeychainError.errSecDuplicateItem.status else { throw error }
            let query = ItemQuery(itemClass: item.itemClass, attributes: key)
            var changes = ItemChanges(attributes: item.attributes, accessibility: item.accessibility, secret: item.secret)
            changes.accessControl = item.accessControl
            // Updating an item with an access control prompts, as the KeychainTouchID sample does.
            _ = try KeychainServices.perform(.update(query, changes), authenticating: AuthenticationOptions(reason: "Authenticate to update your password"))
        }
    }

    static func find(_ query: ItemQuery, secretOnly: Bool) throws {
        var query = query
        query.returns = secretOnly ? .data : .attributes
        let options = AuthenticationOptions(reason: "Authenticate to access service password")
        guard case .items(let items) = try KeychainServices.perform(.copyMatching(query), authenticating: options), let item = items.first else { return }
        if secretOnly {
            var data = item.secret?.copyData() ?? Data()
            defer { data.resetBytes(in: 0..<data.count) }
            FileHandle.standardOutput.write(data)
            FileHandle.standardOutput.write(Data("\n".utf8))
        } else {
            print(ItemPrinter.render(item))
        }
    }

    static func delete(_ query: ItemQuery) throws {
        _ = try KeychainServices.perform(.delete(query))
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
    @Option(name: .customShort("s"), help: "Service (kSecAttrService).") var service: String
    @Option(name: .customShort("a"), help: "Account (kSecAttrAccount).") var account: String
    @Option(name: .customShort("l"), help: "Label (kSecAttrLabel).") var label: String?
    @Option(name: .customShort("j"), help: "Comment (kSecAttrComment).") var comment: String?
    @Option(help: "Accessibility, e.g. WhenUnlocked, AfterFirstUnlock, WhenPasscodeSetThisDeviceOnly.") var accessible: Accessibility?
    @Option(help: "Require the device owner to read it: userPresence, biometryAny, biometryCurrentSet, devicePasscode, or combinations like biometryAny,or,devicePasscode (with --accessible, default WhenPasscodeSetThisDeviceOnly).")
    var accessControl: AccessControlArgument?
    @Flag(name: .customShort("U"), help: "Update the item if it already exists.") var update = false

    func run() throws {
        try Session.run {
            let key = ItemCommands.attributes([(kSecAttrService, service), (kSecAttrAccount, account)])
            var item = NewItem(
                itemClass: .genericPassword,
                attributes: key.merging(ItemCommands.attributes([(kSecAttrLabel, label), (kSecAttrComment, comment)])) { a, _ in a },
                accessibility: accessible, secret: try SecretInput.itemSecret())
            if let accessControl {
                item.accessControl = try AccessControl(protection: accessible ?? .whenPasscodeSetThisDeviceOnly, flags: accessControl.flags)
                item.accessibility = nil
            }
            try ItemCommands.add(item, updateExisting: update, key: key)
        }
    }
}

struct FindGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Find a generic password; print its attributes, or with -w only its secret.")
    @Option(name: .customShort("s"), help: "Service (kSecAttrService).") var service: String?
    @Option(name: .customShort("a"), help: "Account (kSecAttrAccount).") var account: String?
    @Flag(name: .customShort("w"), help: "Print only the secret.") var secretOnly = false

    func run() throws {
        try Session.run {
            let attributes = ItemCommands.attributes([(kSecAttrService, service), (kSecAttrAccount, account)])
            try ItemCommands.find(ItemQuery(itemClass: .genericPassword, attributes: attributes), secretOnly: secretOnly)
        }
    }
}

struct DeleteGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete every generic password that matches.")
    @Option(name: .customShort("s"), help: "Service (kSecAttrService).") var service: String?
    @Option(name: .customShort("a"), help: "Account (kSecAttrAccount).") var account: String?

    func run() throws {
        try Session.run {
            let attributes = ItemCommands.attributes([(kSecAttrService, service), (kSecAttrAccount, account)])
            try ItemCommands.delete(ItemQuery(itemClass: .genericPassword, attributes: attributes))
        }
    }
}
