import CDBus
import CKeychainSupport
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Follows logind on the system bus and reports when a login session locks, with the session's
/// user as logind records it, so that that user's keychain locks with the screen.
///
/// logind tells of a lock in two ways, and both count: the session's `Lock` signal (sent by
/// `loginctl lock-session`, which screen lockers obey) and its `LockedHint` property turning true
/// (set by screen lockers once they are up). A user may have several sessions (a desktop and an
/// ssh login); when any of them locks, the daemon locks that user's keychain: the cautious
/// reading of "the session is locked".
///
/// Nothing in a signal is believed on its word: it must come from the bus name's current owner
/// (`org.freedesktop.login1`, asked of the bus), and the session's user is asked of logind, so a
/// program that sends a forged signal straight to this connection locks nothing, and a lock of
/// one user's session is reported as that user's alone.
///
/// Where there is no system bus (a container, a minimal server), nothing is followed and the
/// daemon says so once in its log; the idle lock and `keychainctl lock` work as before.
final class SessionLockWatcher: Sendable {
    private static let logind = "org.freedesktop.login1"
    private static let sessionInterface = "org.freedesktop.login1.Session"
    private static let propertiesInterface = "org.freedesktop.DBus.Properties"
    private let logger: Logger
    private let onLock: @Sendable (_ session: String, _ user: uid_t) -> Void
    private let stopping = Atomic<Bool>(false)
    /// True while logind's lock signals reach this watcher.
    private let following = Atomic<Bool>(false)
    /// A pipe ``stop()`` writes to, ending the thread's wait for the bus: the thread sleeps
    /// until the bus or this pipe has something, with no periodic wake-up.
    private let stopPipe: (read: Int32, write: Int32)
    private let ended = DispatchSemaphore(value: 0)

    /// A watcher that calls `onLock` with the session's object path and its user each time a
    /// session locks. It does nothing until ``start()``.
    init(logger: Logger, onLock: @escaping @Sendable (_ session: String, _ user: uid_t) -> Void) {
        self.logger = logger
        self.onLock = onLock
        var ends: [Int32] = [-1, -1]
        _ = kc_pipe_cloexec(&ends)
        stopPipe = (ends[0], ends[1])
    }

    deinit {
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or the standard socket) and follows
    /// logind on a thread of its own until ``stop()``.
    func start() {
        let thread = Thread { [self] in
            follow()
            ended.signal()
        }
        thread.name = "logind session locks"
        thread.start()
    }

    /// Stops following and waits (at most a second) for the thread to close its connection.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = write(stopPipe.write, "x", 1)
        _ = ended.wait(timeout: .now() + 1)
    }

    private func follow() {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
            logger.info(
                "no system bus, so session locks are not followed", metadata: ["reason": "\(Self.message(error))"])
            return
        }
        dbus_connection_set_exit_on_disconnect(bus, 0)
        defer {
            dbus_connection_close(bus)
            dbus_connection_unref(bus)
        }
        let rules = [
            "type='signal',sender='\(Self.logind)',interface='\(Self.sessionInterface)',member='Lock'",
            "type='signal',sender='\(Self.logind)',interface='\(Self.propertiesInterface)',member='PropertiesChanged',"
                + "arg0='\(Self.sessionInterface)'",
        ]
        for rule in rules {
            dbus_bus_add_match(bus, rule, &error)
            if dbus_error_is_set(&error) != 0 {
                logger.warning(
                    "the system bus refused to report logind's signals, so session locks are not followed",
                    metadata: ["reason": "\(Self.message(error))"])
                return
            }
        }
        if dbus_bus_name_has_owner(bus, Self.logind, nil) == 0 {
            logger.info("logind is not on the system bus (yet); session locks are followed once it is")
        }
        var busDescriptor: Int32 = -1
        guard stopPipe.read >= 0, dbus_connection_get_unix_fd(bus, &busDescriptor) != 0 else {
            logger.warning("cannot wait on the system bus, so session locks are not followed")
            return
        }
        following.store(true, ordering: .relaxed)
        defer { following.store(false, ordering: .relaxed) }
        while !stopping.load(ordering: .relaxed) {
            // What has come (without blocking), every message it completes, then a wait.
            guard dbus_connection_read_write(bus, 0) != 0 else {
                logger.warning("the system bus closed; session locks are no longer followed")
                return
            }
            while let message = dbus_connection_pop_message(bus) {
                defer { dbus_message_unref(message) }
                if let (session, user) = lockedSession(message, bus) {
                    onLock(session, user)
                }
            }
            var waits = [
                pollfd(fd: busDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&waits, nfds_t(waits.count), -1) < 0 && errno != EINTR {
                logger.warning(
                    "the wait on the system bus failed; session locks are no longer followed",
                    metadata: ["reason": "\(String(cString: strerror(errno)))"])
                return
            }
        }
    }

    /// The users whose screen lock this watcher follows now: those with a graphical login
    /// session (``GraphicalSessions``) while logind's signals reach it; none otherwise.
    func usersWhoseScreenLockIsFollowed() -> Set<uid_t> {
        guard following.load(ordering: .relaxed) else { return [] }
        return GraphicalSessions.users() ?? []
    }

    /// The object path and user of the session `message` reports locked, when logind itself
    /// sent it.
    private func lockedSession(_ message: OpaquePointer, _ bus: OpaquePointer) -> (String, uid_t)? {
        let reportsLock: Bool
        if dbus_message_is_signal(message, Self.sessionInterface, "Lock") != 0 {
            reportsLock = true
        } else if dbus_message_is_signal(message, Self.propertiesInterface, "PropertiesChanged") != 0 {
            reportsLock = Self.turnsLockedHintOn(message)
        } else {
            reportsLock = false
        }
        guard reportsLock, let path = dbus_message_get_path(message).map({ String(cString: $0) }),
            let sender = dbus_message_get_sender(message).map({ String(cString: $0) }),
            sender == Self.logindOwner(bus), let user = Self.user(ofSession: path, bus)
        else { return nil }
        return (path, user)
    }

    /// Whether a `PropertiesChanged(s interface, a{sv} changed, as invalidated)` of a session
    /// sets `LockedHint` to true.
    private static func turnsLockedHintOn(_ message: OpaquePointer) -> Bool {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(message, &arguments) != 0, string(at: &arguments) == sessionInterface,
            dbus_message_iter_next(&arguments) != 0, dbus_message_iter_get_arg_type(&arguments) == DBusType.array
        else { return false }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        while dbus_message_iter_get_arg_type(&entries) == DBusType.dictEntry {
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            if string(at: &entry) == "LockedHint", dbus_message_iter_next(&entry) != 0,
                dbus_message_iter_get_arg_type(&entry) == DBusType.variant
            {
                var value = DBusMessageIter()
                dbus_message_iter_recurse(&entry, &value)
                guard dbus_message_iter_get_arg_type(&value) == DBusType.boolean else { return false }
                var locked: dbus_bool_t = 0
                dbus_message_iter_get_basic(&value, &locked)
                return locked != 0
            }
            dbus_message_iter_next(&entries)
        }
        return false
    }

    /// The unique bus name that owns `org.freedesktop.login1` now, asked of the bus.
    private static func logindOwner(_ bus: OpaquePointer) -> String? {
        guard
            let reply = call(
                bus, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                method: "GetNameOwner", arguments: [logind])
        else { return nil }
        defer { dbus_message_unref(reply) }
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(reply, &iterator) != 0 else { return nil }
        return string(at: &iterator)
    }

    /// The uid logind records for the session at `path` (its `User` property, a `(uo)`).
    private static func user(ofSession path: String, _ bus: OpaquePointer) -> uid_t? {
        sessionProperty("User", ofSession: path, bus) { variant -> uid_t? in
            guard dbus_message_iter_get_arg_type(&variant) == DBusType.structure else { return nil }
            var fields = DBusMessageIter()
            dbus_message_iter_recurse(&variant, &fields)
            guard dbus_message_iter_get_arg_type(&fields) == DBusType.uint32 else { return nil }
            var uid: UInt32 = 0
            dbus_message_iter_get_basic(&fields, &uid)
            return uid
        }
    }

    /// The session property `name` of the session at `path`, as `read` takes it from inside the
    /// variant logind answers; nil when logind answers none, or another type.
    static func sessionProperty<Value>(
        _ name: String, ofSession path: String, _ bus: OpaquePointer, read: (inout DBusMessageIter) -> Value?
    ) -> Value? {
        guard
            let reply = call(
                bus, destination: logind, path: path, interface: propertiesInterface, method: "Get",
                arguments: [sessionInterface, name])
        else { return nil }
        defer { dbus_message_unref(reply) }
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(reply, &iterator) != 0,
            dbus_message_iter_get_arg_type(&iterator) == DBusType.variant
        else { return nil }
        var variant = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &variant)
        return read(&variant)
    }

    /// A method call with string arguments and its reply (which the caller unrefs); nil on an
    /// error reply or after a second without one.
    static func call(
        _ bus: OpaquePointer, destination: String, path: String, interface: String, method: String, arguments: [String]
    ) -> OpaquePointer? {
        guard let call = dbus_message_new_method_call(destination, path, interface, method) else { return nil }
        defer { dbus_message_unref(call) }
        var appender = DBusMessageIter()
        dbus_message_iter_init_append(call, &appender)
        for argument in arguments {
            let appended = argument.withCString { text in
                var pointer: UnsafePointer<CChar>? = text
                return dbus_message_iter_append_basic(&appender, DBusType.string, &pointer)
            }
            guard appended != 0 else { return nil }
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        return dbus_connection_send_with_reply_and_block(bus, call, 1000, &error)
    }

    /// The string at `iterator`, or nil when it holds something else.
    static func string(at iterator: inout DBusMessageIter) -> String? {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusType.string else { return nil }
        var text: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &text)
        return text.map { String(cString: $0) }
    }

    static func message(_ error: DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown"
    }
}

/// D-Bus type codes (libdbus defines them as cast macros, which Swift does not import).
enum DBusType {
    static let string = Int32(UInt8(ascii: "s"))
    static let boolean = Int32(UInt8(ascii: "b"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let array = Int32(UInt8(ascii: "a"))
    static let variant = Int32(UInt8(ascii: "v"))
    static let structure = Int32(UInt8(ascii: "r"))
    static let dictEntry = Int32(UInt8(ascii: "e"))
    static let objectPath = Int32(UInt8(ascii: "o"))
}
