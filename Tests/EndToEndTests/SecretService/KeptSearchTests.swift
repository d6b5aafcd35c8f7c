import Foundation
import Testing

/// Issue 55: a client's search, asked again, and an app's collection records, asked by its next
/// client, are answered from the bridge's memory while keychaind's change number of the
/// keychain stands still (Docs/SecretService.md, "What the bridge remembers"). The tests show
/// that each change a search or the records could show, made by another program than the
/// client, shows in the next answer at once, as a client that never searched is answered; and
/// that a kept search never serves a secret.
@Suite struct KeptSearchTests {
    /// A client of secretstorage in the test's keychain (with a passcode when `passcode`), with
    /// an item stored and searched for twice (the second search asks keychaind for its change
    /// number, so that the next may be kept); `body` runs after it. In the script, `search()`
    /// is the client's `Service.SearchItems` for the item's attributes (how many unlocked, how
    /// many locked), `fresh()` the same asked by a new client, `other(code)` runs Python in
    /// another process (`collection` its default collection), `outcome(ask)` is what `ask()`
    /// returns or the D-Bus error it raises, `keychainctl` is keychainctl's path.
    private func run(passcode: Bool = true, _ body: String) throws -> CommandRunner.Output {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        return try service.script(
            """
            \(passcode ? #"printf '1234\n' | "$KEYCHAINCTL" passcode set >/dev/null"# : "")
            /usr/bin/python3 - "$KEYCHAINCTL" <<'PY'
            import secretstorage, subprocess, sys
            from jeepney import DBusAddress, new_method_call
            from jeepney.wrappers import unwrap_msg
            keychainctl = sys.argv[1]
            bus = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(bus)
            collection.create_item("Mail", {"service": "imap", "user": "alice"}, b"kept")
            service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                                  interface="org.freedesktop.Secret.Service")
            def search(connection=bus):
                unlocked, locked = unwrap_msg(connection.send_and_get_reply(
                    new_method_call(service, "SearchItems", "a{ss}", ({"service": "imap"},))))
                return len(unlocked), len(locked)
            def fresh():
                connection = secretstorage.dbus_init()
                try:
                    return search(connection)
                finally:
                    connection.close()
            def outcome(ask):
                try:
                    return ask()
                except Exception as error:
                    return getattr(error, "name", type(error).__name__)
            def other(code):
                subprocess.run([sys.executable, "-c", "import secretstorage\\n"
                    "collection = secretstorage.get_default_collection(secretstorage.dbus_init())\\n" + code],
                    check=True)
            search()
            search()
            \(body)
            PY
            """)
    }

    /// Another client adds an item and deletes it: each shows in the next search.
    @Test func anotherClientsWritesShowAtOnce() throws {
        let result = try run(
            """
            print("kept", search())
            other("collection.create_item('Work', {'service': 'imap', 'user': 'bob'}, b'new')")
            print("added", search())
            other("[item.delete() for item in collection.search_items({'user': 'bob'})]")
            print("deleted", search())
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "kept (1, 0)\nadded (2, 0)\ndeleted (1, 0)\n", "\(result.stdout) \(result.stderr)")
    }

    /// `keychainctl lock` and `unlock`: the next search answers as a new client's does (locked:
    /// `IsLocked`, as the bridge answers a search of a locked keychain).
    @Test func aLockElsewhereDropsTheKeptSearch() throws {
        let result = try run(
            """
            subprocess.run([keychainctl, "lock"], check=True)
            locked = outcome(search)
            print("locked", locked, locked == outcome(fresh))
            subprocess.run([keychainctl, "unlock"], input=b"1234\\n", check=True, stdout=subprocess.DEVNULL)
            unlocked = outcome(search)
            print("unlocked", unlocked, unlocked == outcome(fresh))
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == "locked org.freedesktop.Secret.Error.IsLocked True\nunlocked (1, 0) True\n",
            "\(result.stdout) \(result.stderr)")
    }

    /// keychaind stops, and the daemon started after it (by another client's request) gets a
    /// write: the client's connection to the stopped daemon is closed, and its next search asks
    /// the new one. (No passcode: the new daemon's keychain is open at once.)
    @Test func aSearchKeptFromAStoppedDaemonIsDropped() throws {
        let result = try run(
            passcode: false,
            """
            subprocess.run([keychainctl, "daemon", "stop"], check=True, stdout=subprocess.DEVNULL)
            other("collection.create_item('Work', {'service': 'imap', 'user': 'bob'}, b'new')")
            print("after the restart", search())
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "after the restart (2, 0)\n", "\(result.stdout) \(result.stderr)")
    }

    /// Two rows' sealed attributes swapped on disk: the kept search lists what keychaind would
    /// list (the addresses it opened), and the secret is refused, never served from memory.
    @Test func aTamperedRowsSecretIsRefusedAfterAKeptSearch() throws {
        let result = try run(
            """
            other("collection.create_item('Work', {'service': 'imap', 'user': 'bob'}, b'new')")
            search()
            search()
            database = subprocess.run(["sh", "-c", 'echo "$XDG_DATA_HOME/keychain/keychain.db"'],
                                      capture_output=True, text=True).stdout.strip()
            subprocess.run(["sqlite3", database, "UPDATE items SET metadata = CASE id WHEN 1 THEN "
                "(SELECT metadata FROM items WHERE id = 2) ELSE (SELECT metadata FROM items WHERE id = 1) END "
                "WHERE id IN (1, 2)"], check=True)
            listed = search()
            print("listed", listed, listed == fresh())
            try:
                print("read", next(collection.search_items({"user": "alice"})).get_secret())
            except Exception as error:
                print("refused", type(error).__name__)
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("listed (2, 0) True\nrefused "), "\(result.stdout) \(result.stderr)")
        #expect(!result.stdout.contains("kept"), "\(result.stdout)")
    }

    /// Each new client of an app reads the service's `Collections` (as `secret-tool` does at
    /// every run): another client of the app makes a collection, and then the keychain is
    /// locked; the next client is told of each at once.
    @Test func anotherClientsCollectionAndALockShowToTheNextClient() throws {
        let result = try run(
            """
            def collections():
                connection = secretstorage.dbus_init()
                try:
                    return sorted(found.get_label() for found in secretstorage.get_all_collections(connection))
                finally:
                    connection.close()
            print("before", collections())
            other("secretstorage.create_collection(secretstorage.dbus_init(), 'Work')")
            print("made", collections())
            subprocess.run([keychainctl, "lock"], check=True)
            print("locked", outcome(collections))
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "before ['Login', 'Session']\nmade ['Login', 'Session', 'Work']\n"
                + "locked org.freedesktop.Secret.Error.IsLocked\n",
            "\(result.stdout) \(result.stderr)")
    }
}
