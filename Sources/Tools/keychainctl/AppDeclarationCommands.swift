import ArgumentParser
import Foundation
import Keychain

extension Apps {
    /// `keychainctl apps declare EXECUTABLE`: what an app is, as its entitlements say on Apple
    /// platforms, so that code hard-coding its access group works here.
    struct Declare: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare an app's application identifier and keychain access groups.",
            discussion: """
                Takes the app's Apple entitlements file (the plist Xcode keeps, with \
                application-identifier, keychain-access-groups and \
                com.apple.security.application-groups, build variables written out), or \
                --identifier and --access-group. The app's groups are its keychain access groups, \
                its identifier and its application groups, in that order, as on iOS; the first is \
                where its items go without kSecAttrAccessGroup. It also keeps its executable's own \
                group, where what it stored before stays.
                """)

        @Argument(help: ArgumentHelp("The app's executable.", valueName: "executable")) var executable: String
        @Option(help: ArgumentHelp("An Apple entitlements file (plist).", valueName: "file")) var entitlements: String?
        @Option(
            help: ArgumentHelp("The application identifier (instead of, or over, the file's).", valueName: "identifier")
        ) var identifier: String?
        @Option(
            name: .customLong("access-group"),
            help: ArgumentHelp("A keychain access group, after the file's (repeat for more).", valueName: "group"))
        var accessGroups: [String] = []

        func run() throws {
            try KeychainCommand.run {
                let app = try Self.resolvedExecutable(executable)
                var declaration = try entitlements.map(Self.read) ?? AppDeclaration(applicationIdentifier: "")
                if let identifier { declaration.applicationIdentifier = identifier }
                declaration.keychainAccessGroups += accessGroups.filter {
                    !declaration.keychainAccessGroups.contains($0)
                }
                guard !declaration.applicationIdentifier.isEmpty else {
                    throw KeychainError(
                        .errSecParam,
                        "give the app's identifier: --identifier, or application-identifier in --entitlements")
                }
                _ = try ProcessKeychain.perform(.declareApp(executable: app, declaration: declaration))
                KeychainCommand.note(
                    "\(app) is \(declaration.applicationIdentifier); its groups: "
                        + "\(declaration.accessGroups.joined(separator: ", ")) (the first is its default), and its own"
                )
            }
        }

        /// The path the daemon sees for the executable (`/proc/PID/exe` has links resolved).
        static func resolvedExecutable(_ path: String) throws -> String {
            guard let resolved = realpath(path, nil) else {
                throw KeychainError(.errSecParam, "\(path): \(String(cString: strerror(errno)))")
            }
            defer { free(resolved) }
            return String(cString: resolved)
        }

        /// An Apple entitlements plist: `application-identifier` (or macOS's
        /// `com.apple.application-identifier`), `keychain-access-groups` and
        /// `com.apple.security.application-groups`.
        static func read(_ path: String) throws -> AppDeclaration {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw KeychainError(.errSecParam, "\(path) cannot be read: \(error.localizedDescription)")
            }
            guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
            else {
                throw KeychainError(
                    .errSecParam, "\(path) is not an entitlements file (a property list holding a dictionary)")
            }
            let identifier = plist["application-identifier"] ?? plist["com.apple.application-identifier"]
            guard identifier == nil || identifier is String else {
                throw KeychainError(.errSecParam, "\(path): application-identifier is not a string")
            }
            func strings(_ key: String) throws(KeychainError) -> [String] {
                guard let strings = (plist[key] ?? [String]()) as? [String] else {
                    throw KeychainError(.errSecParam, "\(path): \(key) is not an array of strings")
                }
                return strings
            }
            return AppDeclaration(
                applicationIdentifier: identifier as? String ?? "",
                keychainAccessGroups: try strings("keychain-access-groups"),
                applicationGroups: try strings("com.apple.security.application-groups"))
        }
    }

    /// `keychainctl apps undeclare EXECUTABLE`: the app is its executable's path again.
    struct Undeclare: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an app's declaration: it is its executable's path again.")
        @Argument(help: ArgumentHelp("The app's executable.", valueName: "executable")) var executable: String

        func run() throws {
            try KeychainCommand.run {
                // A removed executable's declaration is removed by the path it had.
                let app = (try? Declare.resolvedExecutable(executable)) ?? executable
                _ = try ProcessKeychain.perform(.declareApp(executable: app, declaration: nil))
            }
        }
    }
}
