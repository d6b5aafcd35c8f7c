import CDBus
import CKeychainSupport
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// A private connection to a message bus, through libdbus, used from one thread.
///
/// libdbus is the reference implementation, and keychaind already links it to follow logind:
/// sd-bus's object vtables would fit a server, but the Secret Service's objects are made on the
/// fly from keychain items (a path names an item the keychain finds), so one dispatcher over
/// plain messages (``SecretServiceProvider``) serves them, and the package needs no second bus
/// library.
final class BusConnection {
    private let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        dbus_connection_set_exit_on_disconnect(pointer, 0)
    }

    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`, as libdbus finds it).
    static func session() throws(DBusFailure) -> BusConnection {
        try connect(DBUS_BUS_SESSION)
    }

    private static func connect(_ bus: DBusBusType) throws(DBusFailure) -> BusConnection {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_bus_get_private(bus, &error) else {
            throw DBusFailure(
                name: error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                message: error.message.map { String(cString: $0) } ?? "no bus")
        }
        return BusConnection(connection)
    }

    /// The process listening on the bus (the bus daemon), as the kernel says (`SO_PEERCRED` on
    /// this connection's socket); nil when it cannot tell.
    var daemonProcess: (pid: Int32, uid: uid_t)? {
        var descriptor: Int32 = -1
        guard dbus_connection_get_socket(pointer, &descriptor) != 0, descriptor >= 0 else { return nil }
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0 else { return nil }
        return (pid, uid)
    }

    /// This connection's unique name (`:1.42`).
    var uniqueName: String { dbus_bus_get_unique_name(pointer).map { String(cString: $0) } ?? "" }

    /// What a name request came to.
    enum NameRequest: Equatable {
        case owned
        /// Another connection owns it and did not let it go.
        case takenBy(String)
    }

    /// Asks the bus for `name`, never waiting in its queue; with `replacing`, takes it from an
    /// owner that allows it.
    func request(_ name: String, replacing: Bool) throws(DBusFailure) -> NameRequest {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let flags = UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE) | (replacing ? UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING) : 0)
        let result = dbus_bus_request_name(pointer, name, flags, &error)
        if dbus_error_is_set(&error) != 0 {
            throw DBusFailure(
                name: String(cString: error.name), message: error.message.map { String(cString: $0) } ?? "")
        }
        if result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER {
            return .owned
        }
        return .takenBy(owner(of: name) ?? "another connection")
    }

    /// The unique name that owns `name` now.
    func owner(of name: String) -> String? {
        let reply = try? call(
            busMethod: "GetNameOwner", [.string(name)])
        return reply?.arguments()?.first?.text
    }

    /// Asks the bus to route to this connection the messages `rule` matches.
    func addMatch(_ rule: String) throws(DBusFailure) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        dbus_bus_add_match(pointer, rule, &error)
        if dbus_error_is_set(&error) != 0 {
            throw DBusFailure(
                name: String(cString: error.name), message: error.message.map { String(cString: $0) } ?? "")
        }
    }

    /// The process behind connection `sender`, as the bus recorded it when it connected
    /// (`GetConnectionCredentials`): its uid, and the process, by the pidfd the bus gives
    /// (`ProcessFD`, dbus-broker and dbus-daemon 1.15.8 and later) or else by its pid.
    ///
    /// With a pidfd, the process named is the very one that connected. With a pid alone (Debian
    /// 12's dbus-daemon), the name is taken now: should that process have exited and its pid
    /// gone to another of the user's processes since it connected, the other would be named.
    /// Its start time, read now, pins the name from here on.
    func credentials(of sender: String) throws(DBusFailure) -> (uid: UInt32, process: ProcessReference) {
        let reply = try call(busMethod: "GetConnectionCredentials", [.string(sender)])
        guard let fields = reply.arguments()?.first?.variantDictionary,
            case .uint32(let uid)? = fields["UnixUserID"], case .uint32(let pid)? = fields["ProcessID"]
        else { throw DBusFailure.accessDenied("the bus gave no credentials for \(sender)") }
        if case .unixFD(let pidfd)? = fields["ProcessFD"] {
            defer { close(pidfd) }
            guard let start = ProcessFiles.startTime(Int32(bitPattern: pid)),
                Self.pid(of: pidfd) == Int32(bitPattern: pid),
                kc_pidfd_is_alive(pidfd) == 1
            else { throw DBusFailure.accessDenied("\(sender)'s process has exited") }
            return (uid, ProcessReference(pid: Int32(bitPattern: pid), startTime: start))
        }
        guard let start = ProcessFiles.startTime(Int32(bitPattern: pid)) else {
            throw DBusFailure.accessDenied("\(sender)'s process has exited")
        }
        return (uid, ProcessReference(pid: Int32(bitPattern: pid), startTime: start))
    }

    /// The pid a pidfd of this process stands for (`Pid:` in `/proc/self/fdinfo/FD`).
    private static func pid(of pidfd: Int32) -> Int32? {
        guard let info = ProcessFiles.read(getpid(), "fdinfo/\(pidfd)") else { return nil }
        let text = String(decoding: info, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("Pid:") {
            return Int32(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Calls a method of the bus itself and waits (at most five seconds) for its reply.
    private func call(busMethod member: String, _ arguments: [DBusValue]) throws(DBusFailure) -> DBusMessage {
        guard
            let message = DBusMessage.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: member, arguments)
        else { throw DBusFailure.failed("out of memory") }
        return try call(message, timeoutMilliseconds: 5000)
    }

    /// Sends `message` and waits for its reply; an error reply is thrown.
    func call(_ message: DBusMessage, timeoutMilliseconds: Int32) throws(DBusFailure) -> DBusMessage {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard
            let reply = dbus_connection_send_with_reply_and_block(pointer, message.pointer, timeoutMilliseconds, &error)
        else {
            throw DBusFailure(
                name: error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                message: error.message.map { String(cString: $0) } ?? "no reply")
        }
        return DBusMessage(taking: reply)
    }

    /// Queues `message` for sending.
    func send(_ message: DBusMessage) {
        _ = dbus_connection_send(pointer, message.pointer, nil)
    }

    /// Writes what is queued, and reads what has come, without waiting; false once the bus
    /// has closed the connection.
    func readWrite() -> Bool {
        dbus_connection_read_write(pointer, 0) != 0
    }

    /// Writes everything queued, waiting as long as it takes.
    func flush() {
        dbus_connection_flush(pointer)
    }

    /// The next message read, if any.
    func nextMessage() -> DBusMessage? {
        dbus_connection_pop_message(pointer).map(DBusMessage.init(taking:))
    }

    /// The socket, to wait on.
    var descriptor: Int32? {
        var descriptor: Int32 = -1
        return dbus_connection_get_unix_fd(pointer, &descriptor) != 0 ? descriptor : nil
    }
}
