import CDBus
import Foundation
import KeychainClient
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The Secret Service (`org.freedesktop.secrets`, Secret Service API 0.2) on the keychain,
/// served on the session bus by `keychain-secret-service`.
///
/// Every call is answered for the process that sent it: the bridge asks the bus who that is
/// (``BusConnection/credentials(of:)``) and keychaind for that process
/// (``KeychainRequest/actForProcess(_:)``), so each app sees, reads and changes the items it
/// made and no other's, whatever it asks. The objects are made on the fly from the paths:
/// `/org/freedesktop/secrets/collection/login/ID` names the client's item `ID`, found in the
/// keychain when asked for; signals about an app's objects go to that app's connection alone.
///
/// The bridge serves one call at a time on one thread. A prompt's sheet (an unlock) is drawn on
/// a thread of its own and its `Completed` signal sent from the loop.
public final class SecretServiceProvider {
    static let busName = "org.freedesktop.secrets"
    let bus: BusConnection
    private(set) var clients: [String: BusClient] = [:]
    /// Each connection's process and program as the bridge saw them when the connection joined
    /// the bus (`NameOwnerChanged`), before any call of it: a call from a connection whose
    /// process runs another program by then is refused, and one from the same is served without
    /// asking the bus again.
    private var joined: [String: (process: ProcessReference, executable: String)] = [:]
    private let sessionContents = SessionSecretItems.Contents()
    /// Makes a client's transport to keychaind (a transport acting for the process, in use).
    private let makeTransport: (ProcessReference) -> any KeychainTransport
    /// keychaind's change number, watched on a connection of the bridge's own: searches and
    /// collection records are kept while it stands still (``KeptSearch``,
    /// ``KeptCollectionRecords``). Nil: each is asked of keychaind every time.
    let changeWatch: DaemonTransport?
    private let keptCollectionRecords: KeptCollectionRecords?
    /// Prompts whose sheets finished, for the loop to report.
    let completions: PromptCompletions
    private var nextObjectNumber = 0

    /// Why the bridge could not start.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Connects to the session bus and takes `org.freedesktop.secrets`.
    ///
    /// - Parameter replacing: take the name from the provider that has it, when it allows that
    ///   (gnome-keyring does).
    /// - Throws: ``StartFailure`` when there is no session bus, or another provider keeps the
    ///   name: the message names it and how to switch.
    /// - Parameter systemSocket: the system daemon's socket where it is not at its usual path.
    ///
    /// With the system daemon, the bus must be the user's real one (``SessionBusOrigin``).
    public convenience init(replacing: Bool, systemSocket: String? = nil) throws(StartFailure) {
        try self.init(
            replacing: replacing, realBusOnly: systemSocket != nil || SystemDaemon.isInstalled,
            changeWatch: systemSocket.map { DaemonTransport(systemSocket: $0) } ?? DaemonTransport()
        ) {
            DaemonTransport(actingFor: $0, systemSocket: systemSocket)
        }
    }

    init(
        replacing: Bool, realBusOnly: Bool = false, changeWatch: DaemonTransport?,
        makeTransport: @escaping (ProcessReference) -> any KeychainTransport
    ) throws(StartFailure) {
        do throws(DBusFailure) {
            bus = try BusConnection.session()
        } catch {
            throw StartFailure(
                description:
                    "no session bus to serve (\(error.message)): run it in a desktop session, or under "
                    + "dbus-run-session, or with DBUS_SESSION_BUS_ADDRESS set")
        }
        if realBusOnly {
            guard let daemon = bus.daemonProcess else {
                throw StartFailure(description: "cannot tell which process serves the session bus; serving nothing")
            }
            if let refusal = SessionBusOrigin.refusal(busPID: daemon.pid, busUID: daemon.uid) {
                throw StartFailure(
                    description: "\(refusal); with the system keychain daemon, the Secret Service serves only the bus "
                        + "of your login's service manager (dbus-user-session)")
            }
        }
        self.makeTransport = makeTransport
        self.changeWatch = changeWatch
        keptCollectionRecords = changeWatch.map(KeptCollectionRecords.init(watch:))
        guard let completions = PromptCompletions() else {
            throw StartFailure(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        self.completions = completions
        do throws(DBusFailure) {
            // Clients leaving: their sessions and prompts end with them.
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                    + "member='NameOwnerChanged'")
            switch try bus.request(Self.busName, replacing: replacing) {
            case .owned: break
            case .takenBy(let owner):
                throw DBusFailure.failed(
                    "\(Self.busName) is already served by \(Self.describe(owner, on: bus)). Stop that provider "
                        + "(gnome-keyring: `systemctl --user mask --now gnome-keyring-daemon.service "
                        + "gnome-keyring-daemon.socket`; KeePassXC: turn off its Secret Service integration), "
                        + "or start this one with --replace")
            }
        } catch {
            throw StartFailure(description: error.message)
        }
    }

    /// Asks the session bus to read its configuration again (`ReloadConfig`), so that it finds
    /// an activation file just written, in a directory it may not have watched; false when
    /// there is no session bus or it refused.
    public static func reloadSessionBus() -> Bool {
        guard let bus = try? BusConnection.session(),
            let call = DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ReloadConfig")
        else { return false }
        return (try? bus.call(call, timeoutMilliseconds: 5000)) != nil
    }

    /// The program behind bus name `owner`, in words.
    private static func describe(_ owner: String, on bus: BusConnection) -> String {
        guard let (_, process) = try? bus.credentials(of: owner),
            let executable = ProcessFiles.executable(process.pid)
        else { return owner }
        return "\(executable) (pid \(process.pid))"
    }

    /// Serves until the bus closes the connection.
    ///
    /// Finished prompts are looked for only when their pipe woke the loop: the pipe stays
    /// readable until they are taken, so none is missed, and a call costs no extra `poll`.
    public func run() {
        guard let descriptor = bus.descriptor else { return }
        var waits = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: completions.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        while bus.readWrite() {
            while let message = bus.nextMessage() {
                handle(message)
            }
            if waits[1].revents != 0 { reportFinishedPrompts() }
            bus.flush()
            waits[0].revents = 0
            waits[1].revents = 0
            if poll(&waits, nfds_t(waits.count), -1) < 0 && errno != EINTR { return }
        }
    }

    /// A fresh path element for a session or a prompt.
    func newObjectName() -> String {
        nextObjectNumber += 1
        return "s\(nextObjectNumber)"
    }

    private func handle(_ message: DBusMessage) {
        if message.isSignal {
            noteClientChange(message)
            return
        }
        guard message.isMethodCall else { return }
        let arguments = message.arguments()
        // Reading a descriptor duplicates it: each one sent is closed here once answered (a
        // client sending descriptors to any method must not fill the bridge's table).
        defer {
            for descriptor in arguments?.flatMap(\.unixFDs) ?? [] { close(descriptor) }
        }
        let reply: DBusMessage?
        do throws(DBusFailure) {
            guard let arguments else {
                throw DBusFailure.invalidArguments("an argument of a type the Secret Service does not take")
            }
            let values = try answer(message, arguments)
            reply = message.reply(values)
        } catch {
            reply = message.errorReply(error)
        }
        if message.expectsReply, let reply { bus.send(reply) }
    }

    /// `NameOwnerChanged(name, "", name)`: a connection joined, whose process and program are
    /// noted now; `NameOwnerChanged(name, old, "")`: a client left.
    private func noteClientChange(_ message: DBusMessage) {
        guard message.interface == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
            message.sender == "org.freedesktop.DBus",
            let arguments = message.arguments(), arguments.count == 3, let name = arguments[0].text,
            name.hasPrefix(":")
        else { return }
        if arguments[2].text == "" {
            clients[name] = nil
            joined[name] = nil
        } else if arguments[1].text == "", arguments[2].text == name, name != bus.uniqueName,
            let (uid, process) = try? bus.credentials(of: name), uid == getuid(),
            let executable = ProcessFiles.executable(process.pid)
        {
            joined[name] = (process, executable)
        }
    }

    /// Refuses a call from a connection whose process changed program after it connected: one
    /// that connected, then forked and ran a trusted program while its child calls on the
    /// connection it inherited (the bus names the parent).
    private static func changedProgram(_ sender: String) -> DBusFailure {
        DBusFailure.accessDenied(
            "the process behind \(sender) runs another program than when it connected to the bus; a connection "
                + "serves the program that opened it")
    }

    /// The client that sent `message`, identified on its first call.
    func client(of message: DBusMessage) throws(DBusFailure) -> BusClient {
        guard let sender = message.sender else { throw DBusFailure.accessDenied("a call without a sender") }
        if let client = clients[sender] {
            guard client.runsTheSameProgram else {
                clients[sender] = nil
                throw Self.changedProgram(sender)
            }
            return client
        }
        let process: ProcessReference
        if let seen = joined[sender] {
            // The bus named this connection's process and uid when it joined, and they are the
            // connection's for its life: asked again, it would answer the same. The process is
            // still that one (its start time) and runs the program it ran then, or is refused.
            guard ProcessFiles.startTime(seen.process.pid) == seen.process.startTime,
                ProcessFiles.executable(seen.process.pid) == seen.executable
            else { throw Self.changedProgram(sender) }
            process = seen.process
        } else {
            let (uid, named) = try bus.credentials(of: sender)
            guard uid == getuid() else {
                throw DBusFailure.accessDenied("this Secret Service serves uid \(getuid()) only, not uid \(uid)")
            }
            process = named
        }
        let client = BusClient(
            name: sender, process: process, transport: makeTransport(process), sessionContents: sessionContents,
            changeWatch: changeWatch, keptCollectionRecords: keptCollectionRecords)
        clients[sender] = client
        return client
    }

    /// The reply's arguments to one call, by the object its path names.
    private func answer(_ message: DBusMessage, _ arguments: [DBusValue]) throws(DBusFailure) -> [DBusValue] {
        let interface = message.interface ?? ""
        let member = message.member ?? ""
        let pathText = message.path ?? ""
        switch (interface, member) {
        case ("org.freedesktop.DBus.Peer", "Ping"): return []
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return [.string(SecretServiceIntrospection.xml(for: pathText))]
        default: break
        }
        if pathText == SecretPortalBackend.path {
            return try SecretPortalBackend.answer(interface, member, arguments, client: try client(of: message))
        }
        guard let path = SecretObjectPath(pathText) else {
            throw DBusFailure.noSuchObject("no object at \(pathText)")
        }
        let client = try client(of: message)
        defer { if !RecentlyUnlockedItems.readOnlyMembers.contains(member) { client.recentlyUnlocked.forget() } }
        let call = SecretCall(client: client, path: path, interface: interface, member: member, arguments: arguments)
        if interface == "org.freedesktop.DBus.Properties" { return try answerProperties(call) }
        switch path {
        case .service: return try answerService(call)
        case .collection(let name): return try answerCollection(call, name)
        case .item(let collection, let id): return try answerItem(call, collection, id)
        case .session(let id): return try answerSession(call, id)
        case .prompt(let id): return try answerPrompt(call, id)
        }
    }

    /// Sends signal `member` of `interface` from `path` to `client` alone: another app learns
    /// nothing of this one's objects.
    func signal(_ client: BusClient, path: String, interface: String, member: String, _ arguments: [DBusValue]) {
        guard let message = DBusMessage.signal(path: path, interface: interface, member: member, arguments) else {
            return
        }
        _ = client.name.withCString { dbus_message_set_destination(message.pointer, $0) }
        bus.send(message)
    }
}

/// One method call, with who sent it and what its path names.
struct SecretCall {
    let client: BusClient
    let path: SecretObjectPath
    let interface: String
    let member: String
    let arguments: [DBusValue]

    /// The arguments, checked against `signature`.
    func arguments(_ signature: String) throws(DBusFailure) -> [DBusValue] {
        let given = arguments.map(\.signature).joined()
        guard given == signature else {
            throw DBusFailure.invalidArguments("\(member) takes (\(signature)), not (\(given))")
        }
        return arguments
    }

    var unknown: DBusFailure {
        DBusFailure.unknownMethod("\(path.path) has no method \(member) in \(interface)")
    }
}
