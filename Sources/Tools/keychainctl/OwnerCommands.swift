import ArgumentParser
import Foundation
import Keychain

/// `keychainctl owner login|logout`: through keychaind, keychainctl is an app like any other
/// until the owner proves themselves with the passcode; then, for 5 minutes, in this login
/// session, it sees every access group.
struct Owner: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Open or close an owner session: every app's items, for 5 minutes, in this login session (keychaind).",
        subcommands: [Login.self, Logout.self])

    struct Login: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Open an owner session with the passcode (the keychain's own sheet, or standard input), or with a "
                + "fingerprint.",
            discussion:
                "On a terminal the keychain draws its sheet and reads the passcode itself: it never enters "
                + "keychainctl. A passcode piped on standard input is read by keychainctl and sent, for scripts.")

        @Flag(help: "Touch the fingerprint reader (fprintd) instead of typing the passcode.")
        var fingerprint = false

        func run() throws {
            try KeychainCommand.run {
                if fingerprint {
                    try TouchWait.untilMatch { .openOwnerSessionByBiometry(timeout: $0) }
                } else if SecretInput.isTerminal {
                    try KeychainSheet.perform(
                        .openOwnerSessionBySheet(
                            KeychainSheet.authentication(
                                .passcode, reason: "To see and manage every app's items for 5 minutes")))
                } else {
                    _ = try ProcessKeychain.perform(
                        .openOwnerSession(passcode: try SecretInput.line(prompt: "Passcode: ")))
                }
                KeychainCommand.note("owner session open for 5 minutes in this login session")
            }
        }
    }

    struct Logout: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Close the owner session now.")

        func run() throws {
            try KeychainCommand.run { _ = try ProcessKeychain.perform(.closeOwnerSession) }
        }
    }
}

/// `keychainctl apps grant|revoke|declare|undeclare|list`: shared access groups and declared
/// app identities, the owner's entitlements list.
struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Let apps share access groups, or declare an app's identifier and groups (needs an owner session).",
        discussion:
            "An app is named by the absolute path of its executable; a shared group by a name such as "
            + "com.example.shared.",
        subcommands: [Grant.self, Revoke.self, Declare.self, Undeclare.self, List.self])

    /// The app and the group a grant or a revocation is about.
    struct Entitlement: ParsableArguments {
        @Argument(help: ArgumentHelp("The app's executable (absolute path).", valueName: "executable")) var app: String
        @Argument(help: ArgumentHelp("The shared group.", valueName: "group")) var group: String

        func set(granted: Bool) throws {
            try KeychainCommand.run {
                _ = try ProcessKeychain.perform(.setEntitlement(app: app, group: group, granted: granted))
            }
        }
    }

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let an app use a shared access group.")
        @OptionGroup var entitlement: Entitlement

        func run() throws { try entitlement.set(granted: true) }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop an app from using a shared access group.")
        @OptionGroup var entitlement: Entitlement

        func run() throws { try entitlement.set(granted: false) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show each app's shared access groups.")

        func run() throws {
            try KeychainCommand.run {
                guard case .entitlements(let entitlements) = try ProcessKeychain.perform(.listEntitlements) else {
                    throw KeychainError(.errSecInternalComponent, "the keychain answered with something else")
                }
                guard case .declaredApps(let declared) = try ProcessKeychain.perform(.listDeclaredApps) else {
                    throw KeychainError(.errSecInternalComponent, "the keychain answered with something else")
                }
                if entitlements.isEmpty && declared.isEmpty {
                    KeychainCommand.note("no app has a shared access group or a declaration")
                }
                for (app, declaration) in declared.sorted(by: { $0.key < $1.key }) {
                    print(
                        "\(app): declared \(declaration.applicationIdentifier); groups "
                            + "\(declaration.accessGroups.joined(separator: ", "))"
                    )
                }
                for (app, groups) in entitlements.sorted(by: { $0.key < $1.key }) {
                    print("\(app): \(groups.joined(separator: ", "))")
                }
            }
        }
    }
}
