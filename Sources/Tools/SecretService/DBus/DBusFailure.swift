/// A D-Bus error reply: its name (`org.freedesktop.Secret.Error.IsLocked`) and a sentence.
struct DBusFailure: Error, Sendable, Equatable {
    var name: String
    var message: String

    static func invalidArguments(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    static func unknownMethod(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }
    static func notSupported(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
    }
    static func accessDenied(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.DBus.Error.AccessDenied", message: message)
    }
    static func failed(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
    static func isLocked(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.Secret.Error.IsLocked", message: message)
    }
    static func noSession(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.Secret.Error.NoSession", message: message)
    }
    static func noSuchObject(_ message: String) -> DBusFailure {
        DBusFailure(name: "org.freedesktop.Secret.Error.NoSuchObject", message: message)
    }
}
