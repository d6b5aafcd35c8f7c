import Foundation
import Testing

/// Issue 55: what a Secret Service call costs keychaind, in requests. Each call on a built-in
/// collection (`login`, `session`) asked keychaind for the app's collection records, to learn
/// that the collection exists, which every client's does. secretstorage's lookup is four calls:
/// SearchItems (not in the audit log), the item's `Label` (read when it makes the `Item`: a
/// "search", until the bridge answered it from the label the search carried), its `Locked` (a
/// "search" too, until the bridge answered it from the search just made) and GetSecret (a
/// "read").
@Suite struct SecretServiceRequestTests {
    /// The requests keychaind's audit log records while a client that stored an item looks it
    /// up in the default collection: the item's secret, and no request for the client's
    /// collection records or for `Label` and `Locked`, which the search just answered
    /// (``RecentlyUnlockedItemsTests``).
    @Test func aLookupInTheDefaultCollectionAsksNothingOfTheCollection() throws {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        let client = """
            import secretstorage, sys
            bus = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(bus)
            attributes = {"service": "github.com", "user": "alice"}
            collection.create_item("GitHub token", attributes, b"hunter2")
            print("stored", flush=True)
            sys.stdin.readline()
            item = next(collection.search_items(attributes))
            assert item.get_secret() == b"hunter2"
            print("looked up", flush=True)
            """
        let log = service.shell.runtime.appendingPathComponent("keychain/keychaind.log")
        let result = try service.script(
            """
            coproc LOOKUP { /usr/bin/python3 -c '\(client)'; }
            read -r line <&${LOOKUP[0]}; before=$(wc -c < '\(log.path)')
            echo >&${LOOKUP[1]}; read -r line <&${LOOKUP[0]}; echo "$line"; wait
            tail -c +$((before + 1)) '\(log.path)'
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("looked up\n"), "\(result.stdout)")
        let requests = result.stdout.split(separator: "\n").dropFirst()
        let lines = requests.joined(separator: "\n")
        #expect(!requests.contains { $0.contains("secret-service collection") }, "\(lines)")
        #expect(requests.filter { $0.hasSuffix("] search") || $0.hasSuffix("] read") }.count == 1, "\(lines)")
    }
}
