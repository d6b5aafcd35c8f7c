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
/// of the result: Foundation's share is the difference from `query`, whole process). Embedded by
/// default; `--daemon` goes through a keychaind of its own, and counts the client's side: a keychaind
/// under valgrind (`--trace-children=yes`) starts too slowly for the client's 10-second wait.
@main
struct KeychainProfile {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let throughDaemon = arguments.contains("--daemon")
        arguments.removeAll { $0 == "--daemon" }
        guard arguments.count == 3, let items = Int(arguments[1]), let rounds = Int(arguments[2]),
            ["read", "read-attributes", "refs", "add", "query", "query-bridged"].contains(arguments[0])
        else {
            let operations = "read|read-attributes|refs|add|query|query-bridged"
            FileHandle.standardError.write(Data("usage: keychain-profile \(operations) ITEMS ROUNDS [--daemon]\n".utf8))
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
        ProcessKeychain.transport = throughDaemon
            ? DaemonTransport(environment: environment, daemonArguments: ["--idle-lock", "0"])
            : EmbeddedTransport(directory: scratch.appendingPathComponent("data/keychain"), accessGroups: ["profile"])
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        for i in 0..<items { add(service: "profile", account: "account-\(i)") }
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

    static func add(service: String, account: String) {
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account, kSecValueData as String: Data("secret-\(account)".utf8),
        ]
        precondition(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
    }
}
