import KeychainClient
import KeychainProtocol
import KeychainSupport

/// One D-Bus connection's client, as the bridge serves it: the process the bus named, its
/// requests to keychaind (each answered as that process's app), its sessions and prompts. It is
/// forgotten, sessions and prompts with it, when its connection leaves the bus.
final class BusClient {
    /// Its unique bus name (`:1.42`).
    let name: String
    let process: ProcessReference
    /// Its executable as /proc showed it when the client was identified (the process is pinned
    /// by its start time), or "pid N" when /proc did not show it.
    let executable: String
    /// Its `/proc/PID`, held open: the process's and no later one's.
    private let directory: ProcessDirectory?
    /// keychaind, asked as this client.
    let transport: any KeychainTransport
    /// Its items on disk.
    let keychainItems: KeychainSecretItems
    /// Its items of the `session` collection.
    let sessionItems: SessionSecretItems
    /// The collections it sees.
    let collections: SecretCollections
    /// Its open sessions, by path element.
    var sessions: [String: TransferSession] = [:]
    /// Its prompts not yet completed, by path element.
    var prompts: [String: PendingPrompt] = [:]
    /// The items its latest search listed as unlocked, which answer their `Locked` property
    /// for a moment without asking keychaind.
    var recentlyUnlocked: RecentlyUnlockedItems

    init(
        name: String, process: ProcessReference, transport: any KeychainTransport,
        sessionContents: SessionSecretItems.Contents, changeWatch: DaemonTransport?,
        keptCollectionRecords: KeptCollectionRecords?
    ) {
        self.name = name
        self.process = process
        self.transport = transport
        keychainItems = KeychainSecretItems(transport: transport)
        recentlyUnlocked = RecentlyUnlockedItems(changeWatch: changeWatch)
        collections = SecretCollections(transport: transport, keptRecords: keptCollectionRecords)
        directory = ProcessDirectory(process)
        executable = directory?.executable ?? "pid \(process.pid)"
        // The session items belong to the app keychaind decided the client is, not to the path
        // the bridge read: an LD_PRELOADed secret-tool is `untrusted:` to the system daemon, and
        // must not see the real one's.
        let decided = (transport as? DaemonTransport).flatMap { try? $0.appActedFor() }
        sessionItems = SessionSecretItems(contents: sessionContents, owner: decided ?? "unidentified:\(executable)")
    }

    /// True while the process runs the program it ran when it was identified (read as then: "pid
    /// N" for one whose program cannot be read).
    var runsTheSameProgram: Bool {
        (directory?.executable ?? "pid \(process.pid)") == executable
    }

    /// The store that keeps `collection`'s items.
    func store(for collection: String) -> any SecretItemStore {
        collection == SessionSecretItems.name ? sessionItems : keychainItems
    }
}

/// What a prompt does once the client calls `Prompt`: unlock the keychain on its own sheet,
/// and ask the owner's leave for each other app's item; `objects` are unlocked once it has.
struct PendingPrompt: Sendable {
    var unlocksKeychain: Bool
    var objects: [String]
    var otherAppItems: [SearchMatch]
}
