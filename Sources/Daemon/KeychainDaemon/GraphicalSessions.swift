import CDBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which users have a graphical login session (logind's `Type` of `x11`, `wayland` or `mir`):
/// the sessions a screen locker locks, so that the keychain locks with the screen there, as an
/// iPhone's does, rather than after idle minutes while its owner works (Docs/Daemon.md,
/// "Locking").
enum GraphicalSessions {
    /// logind's session types that have a screen to lock.
    static let types: Set<String> = ["x11", "wayland", "mir"]

    /// The users with a graphical session now, asked of logind on a connection of its own; nil
    /// without a system bus or logind.
    static func users() -> Set<uid_t>? {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else { return nil }
        dbus_connection_set_exit_on_disconnect(bus, 0)
        defer {
            dbus_connection_close(bus)
            dbus_connection_unref(bus)
        }
        guard
            let reply = SessionLockWatcher.call(
                bus, destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                interface: "org.freedesktop.login1.Manager", method: "ListSessions", arguments: [])
        else { return nil }
        defer { dbus_message_unref(reply) }
        var users = Set<uid_t>()
        // One graphical session is enough: a user's other sessions are not asked about.
        for (uid, path) in sessions(reply)
        where !users.contains(uid) && type(ofSession: path, bus).map(types.contains) == true {
            users.insert(uid)
        }
        return users
    }

    /// Each session's uid and object path in `ListSessions`'s `a(susso)`.
    private static func sessions(_ reply: OpaquePointer) -> [(uid_t, String)] {
        var arguments = DBusMessageIter()
        guard dbus_message_iter_init(reply, &arguments) != 0,
            dbus_message_iter_get_arg_type(&arguments) == DBusType.array
        else { return [] }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&arguments, &entries)
        var found: [(uid_t, String)] = []
        while dbus_message_iter_get_arg_type(&entries) == DBusType.structure, found.count < 4096 {
            var fields = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &fields)
            var uid: UInt32 = 0
            var path: UnsafePointer<CChar>?
            if dbus_message_iter_next(&fields) != 0, dbus_message_iter_get_arg_type(&fields) == DBusType.uint32 {
                dbus_message_iter_get_basic(&fields, &uid)
                if dbus_message_iter_next(&fields) != 0, dbus_message_iter_next(&fields) != 0,
                    dbus_message_iter_next(&fields) != 0,
                    dbus_message_iter_get_arg_type(&fields) == DBusType.objectPath
                {
                    dbus_message_iter_get_basic(&fields, &path)
                    if let path { found.append((uid, String(cString: path))) }
                }
            }
            dbus_message_iter_next(&entries)
        }
        return found
    }

    /// The `Type` logind records for the session at `path`.
    private static func type(ofSession path: String, _ bus: OpaquePointer) -> String? {
        SessionLockWatcher.sessionProperty("Type", ofSession: path, bus) { SessionLockWatcher.string(at: &$0) }
    }
}
