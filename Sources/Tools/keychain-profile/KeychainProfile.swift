import Foundation
import Keychain
import KeychainEmbedded

/// The keychain's operations under an instruction-counting profiler, which the benchmark suite's
/// executable cannot run under (valgrind stops on its malloc interposer). Fills a keychain of its
/// own, then repeats one operation; count only that operation's instructions with
/// `--toggle-collect` (Benchmarks/README.md):
///
///     valgrind --tool=callgrind --toggle-collect='*SecItemCopyMatching*' \
///         .build/release/keychain-profile read 1000 200
///
/// Operations: `read` (a secret by service and account), `read-attributes` (the same with the
/// item's attributes, as the Secret Service's `GetSecret` asks), `refs` (the persistent reference of
/// one item by service and account, all a `SecItemCopyMatching` asks for), `add`, `query` (the
/// attributes of 100 items), `query-bridged` (the same, then the caller's `as? [[String: Any]]`
/// of the result: Foundation's share is the difference from `query`, whole process),
/// `secret-service-search` (the Secret Service bridge's search for every one of ITEMS items
/// of a collection, answered with their addresses and labels: keychaind's work for a
/// `SearchItems`, embedded only, as keychaind serves that request to the bridge alone). Embedded by
/// default; `--daemon` goes through a keychaind of its own, and counts the client's side: a keychaind
/// under valgrind (`--trace-children=yes`) starts too slowly for the client's 10-second wait.
@main
struct KeychainProfile {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let throughDaemon = arguments.contains("--daemon")
        arguments.removeAll { $0 == "--daemon" }
        guard arguments.count == 3, let items = Int(arguments[1]), let rounds = Int(arguments[2]),
            operations.contains(arguments[0]), !(throughDaemon && arguments[0] == "secret-service-search")
        else {
            let usage = "usage: keychain-profile \(operations.joined(separator: "|")) ITEMS ROUNDS [--daemon]\n"
            FileHandle.standardError.write(Data(usage.utf8))
            exit(64)
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-profile-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = scratch.appendingPathComponent("data").path
        environment["XDG_RUNTIME_DIR"] = scratch.appendingPathComponent("run").path
        try FileManager.default.createDirectory(
            at: scratch.appendingPathComponent("run"), withIntermediateDirectories: true)
        let daemonEnvironment = environment
        defer { if throughDaemon { _ = try? DaemonControl.stop(environment: daemonEnvironment) } }
        let transport: any KeychainTransport =
            throughDaemon
            ? DaemonTransport(environment: environment, daemonArguments: ["--idle-lock", "0"])
            : EmbeddedTransport(directory: scratch.appendingPathComponent("data/keychain"), accessGroups: ["profile"])
        ProcessKeychain.transport = transport
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        if arguments[0] == "secret-service-search" {
            for i in 0..<items { try addSecretServiceItem(i, transport) }
        } else {
            for i in 0..<items { add(service: "profile", account: "account-\(i)") }
        }
        for i in 0..<100 { add(service: "profile-query", account: "query-\(i)") }

        for round in 0..<rounds {
            switch arguments[0] {
            case "read", "read-attributes", "refs":
                var result: CFTypeRef?
                let returns = arguments[0] == "refs" ? kSecReturnPersistentRef : kSecReturnData
                var query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "profile",
                    kSecAttrAccount as String: "account-\(round % items)", returns as String: true,
                ]
                if arguments[0] == "read-attributes" { query[kSecReturnAttributes as String] = true }
                precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            case "add":
                add(service: "profile-added", account: "added-\(round)")
            case "secret-service-search":
                let reply = try transport.perform(.searchSecretItems([searchedAttribute: .string("search")]))
                guard case .secretItemMatches(let matches) = reply, matches.count == items else {
                    // Nothing the reply carries is printed, only what was asked.
                    fatalError("the search did not answer with the \(items) items it was asked for")
                }
            default:
                var result: CFTypeRef?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "profile-query",
                    kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
                ]
                precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
                if arguments[0] == "query-bridged" { precondition((result as? [[String: Any]])?.count == 100) }
            }
        }
    }

    static let operations = [
        "read", "read-attributes", "refs", "add", "query", "query-bridged", "secret-service-search",
    ]

    /// The Secret Service attribute `bench`, which `secret-service-search` looks for.
    static let searchedAttribute = ItemClass.secretServiceAttributePrefix + "bench"

    /// Adds the `number`th item as the Secret Service bridge makes one in its `login` collection.
    static func addSecretServiceItem(_ number: Int, _ transport: any KeychainTransport) throws {
        let attributes: [String: AttributeValue] = [
            "svce": .string(SecretServiceItemGrant.servicePrefix + "login"), "acct": .string("item\(number)"),
            "labl": .string("search \(number)"), ItemClass.secretServiceContentTypeAttribute: .string("text/plain"),
            searchedAttribute: .string("search"), ItemClass.secretServiceAttributePrefix + "n": .string("\(number)"),
        ]
        _ = try transport.perform(
            .add(
                NewItem(
                    itemClass: .genericPassword, attributes: attributes, accessibility: .whenUnlocked,
                    secret: SecretBytes(utf8: "s"))))
    }

    static func add(service: String, account: String) {
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account, kSecValueData as String: Data("secret-\(account)".utf8),
        ]
        precondition(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
    }
}
