import ArgumentParser
import Keychain

#if canImport(Glibc)
import Glibc
#endif

/// A `find-generic-password` lookup, the command a script or `git` runs most.
///
/// Its plain forms (`-s`, `-a`, `--access-group`, each with its value as the next argument,
/// and `-w`, each at most once) are read here without building ArgumentParser's command tree,
/// which was half of the instructions of a whole `keychainctl find-generic-password -w`
/// process. Anything else (another spelling, `--help`, a value that starts with `-`, a repeat)
/// is left to the full parser (``FindGenericPassword``), which runs the same lookup.
struct GenericPasswordLookup {
    var service: String?
    var account: String?
    var accessGroup: String?
    var secretOnly = false

    init(service: String?, account: String?, accessGroup: String?, secretOnly: Bool) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.secretOnly = secretOnly
    }

    /// The lookup `arguments` (after the program name) ask for in a plain form, or nil.
    init?(plainArguments arguments: [String]) {
        guard arguments.first == "find-generic-password" else { return nil }
        var rest = arguments.dropFirst()
        while let option = rest.popFirst() {
            if option == "-w" {
                guard !secretOnly else { return nil }
                secretOnly = true
                continue
            }
            guard let value = rest.popFirst(), !value.hasPrefix("-") else { return nil }
            switch option {
            case "-s" where service == nil: service = value
            case "-a" where account == nil: account = value
            case "--access-group" where accessGroup == nil: accessGroup = value
            default: return nil
            }
        }
    }

    /// Prints the first match's attributes, or with `secretOnly` its secret.
    func run() throws {
        try KeychainCommand.runIdentifiedByFirstRequest { firstReplyCame in
            var query = ItemQuery(
                itemClass: .genericPassword,
                attributes: ItemCommands.attributes([
                    (kSecAttrService as String, service), (kSecAttrAccount as String, account),
                ]), synchronizable: .any)
            query.accessGroup = accessGroup
            try ItemCommands.find(query, secretOnly: secretOnly, firstReplyCame: firstReplyCame)
        }
    }

    /// Runs the lookup and ends the process with the status the full parser would give.
    ///
    /// Success and a keychain error (already printed, its status an ``ExitCode``) end the
    /// process directly: ArgumentParser's `exit(withError:)` builds the help of the whole
    /// command tree even to exit 0, which was three quarters of the process's instructions.
    func runAndExit() -> Never {
        do {
            try run()
        } catch let code as ExitCode {
            Glibc.exit(code.rawValue)
        } catch {
            KeychainCtl.exit(withError: error)
        }
        Glibc.exit(EXIT_SUCCESS)
    }
}
