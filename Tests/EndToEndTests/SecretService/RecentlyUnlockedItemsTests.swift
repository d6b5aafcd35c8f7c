import Foundation
import Testing

/// An item's `Locked` and `Label` read just after a search that listed it as unlocked are
/// answered from that search, for a second at most, and its secret's content type comes from
/// it too (Docs/SecretService.md, "What the bridge remembers"): the tests here show that a
/// change by another program through keychaind ends it at once (keychaind's change number
/// moved), and that nothing the client itself changes is answered from it.
@Suite struct RecentlyUnlockedItemsTests {
    /// A client of secretstorage in the test's keychain, with a passcode (so that it locks) and
    /// an item stored; `body` runs after it, with `item` the item a search found and
    /// `keychainctl` the path of keychainctl.
    private func run(_ body: String) throws -> CommandRunner.Output {
        let service = try SecretServiceHarness()
        defer { service.stop() }
        return try service.script(
            """
            printf '1234\\n' | "$KEYCHAINCTL" passcode set >/dev/null
            /usr/bin/python3 - "$KEYCHAINCTL" <<'PY'
            import secretstorage, subprocess, sys
            keychainctl = sys.argv[1]
            bus = secretstorage.dbus_init()
            collection = secretstorage.get_default_collection(bus)
            collection.create_item("Mail", {"service": "imap", "user": "alice"}, b"kept")
            item = next(collection.search_items({"service": "imap"}))
            \(body)
            PY
            """)
    }

    /// A lock by another program: `Locked` says so at once, and `GetSecret` asks keychaind and
    /// is refused.
    @Test func aLockElsewhereShowsInLockedAtOnce() throws {
        let result = try run(
            """
            print("found", item.is_locked())
            subprocess.run([keychainctl, "lock"], check=True)
            print("locked", item.is_locked())
            try:
                item._item.call("GetSecret", "o", secretstorage.util.open_session(bus).object_path)
                print("read")
            except Exception as error:
                print("refused", "org.freedesktop.Secret.Error.IsLocked" in str(error))
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "found False\nlocked True\nrefused True\n", "\(result.stdout) \(result.stderr)")
    }

    /// The label the search carried, then the client's own relabel at once, and the label a
    /// new search carries; another program's relabel is seen at once too.
    @Test func aLabelComesFromTheSearchAndARelabelShows() throws {
        let result = try run(
            """
            print("found", item.get_label())
            item.set_label("Work mail")
            print("relabelled", item.get_label())
            item = next(collection.search_items({"service": "imap"}))
            print("found again", item.get_label())
            subprocess.run([sys.executable, "-c", "import secretstorage; bus = secretstorage.dbus_init(); "
                "next(secretstorage.get_default_collection(bus).search_items({'service': 'imap'})).set_label('Old')"],
                check=True)
            print("relabelled elsewhere", item.get_label())
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == "found Mail\nrelabelled Work mail\nfound again Work mail\nrelabelled elsewhere Old\n",
            "\(result.stdout) \(result.stderr)")
    }

    /// The secret of an item the search found comes with the content type the search carried
    /// (the bridge asks keychaind for the secret alone); another program's new secret of
    /// another type shows in the next `GetSecret`, type and bytes, at once. The client
    /// searches twice first: the bridge watches keychaind's change number from a client's
    /// second search, and carries content types only while it does.
    @Test func aSecretsContentTypeComesFromTheSearchUntilItChanges() throws {
        let result = try run(
            """
            item.set_secret(b"{}", "application/json")
            item = next(collection.search_items({"service": "imap"}))
            item = next(collection.search_items({"service": "imap"}))
            print("found", item.get_secret(), item.get_secret_content_type())
            subprocess.run([sys.executable, "-c", "import secretstorage; bus = secretstorage.dbus_init(); "
                "next(secretstorage.get_default_collection(bus).search_items({'service': 'imap'}))"
                ".set_secret(b'plain', 'text/plain')"], check=True)
            print("changed elsewhere", item.get_secret(), item.get_secret_content_type())
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == "found b'{}' application/json\nchanged elsewhere b'plain' text/plain\n",
            "\(result.stdout) \(result.stderr)")
    }

    /// The client's own lock (`Service.Lock`) and its own deletion of the item are answered
    /// from keychaind at once, not from the search made before them (secretstorage says
    /// `NoSuchObject` as `ItemNotFoundException`).
    @Test func theClientsOwnChangesAreNotAnsweredFromTheSearch() throws {
        let result = try run(
            """
            collection.lock()
            print("after its lock", item.is_locked())
            subprocess.run([keychainctl, "unlock"], input=b"1234\\n", check=True, stdout=subprocess.DEVNULL)
            item = next(collection.search_items({"service": "imap"}))
            item.delete()
            try:
                item.is_locked()
                print("still there")
            except Exception as error:
                print("gone:", type(error).__name__)
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == "after its lock True\ngone: ItemNotFoundException\n", "\(result.stdout) \(result.stderr)")
    }
}
