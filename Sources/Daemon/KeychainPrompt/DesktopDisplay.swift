/// The desktop an app runs on, as its environment names it: where a desktop pinentry opens its
/// window. Taken from a hostile environment, so each value is checked: `DISPLAY` a local X
/// display (`:0`, `:1.0`, `unix:0`), never a remote one; `WAYLAND_DISPLAY` a socket name in the
/// user's runtime directory, without `/`; `XAUTHORITY` an absolute path without `..`.
public struct DesktopDisplay: Sendable, Equatable {
    /// `DISPLAY`, checked.
    public let x11: String?
    /// `WAYLAND_DISPLAY`, checked.
    public let wayland: String?
    /// `XAUTHORITY`, checked.
    public let xAuthority: String?

    /// The desktop `environment` names; nil when it names none that passes the checks.
    public init?(environment: [String: String]) {
        x11 = environment["DISPLAY"].flatMap { Self.isLocalX11Display($0) ? $0 : nil }
        wayland = environment["WAYLAND_DISPLAY"].flatMap { Self.isSocketName($0) ? $0 : nil }
        xAuthority = environment["XAUTHORITY"].flatMap {
            $0.hasPrefix("/") && !$0.split(separator: "/").contains("..") && $0.utf8.count < 4096 ? $0 : nil
        }
        guard x11 != nil || wayland != nil else { return nil }
    }

    /// The variables a pinentry needs to open its window there.
    public var variables: [String: String] {
        var variables: [String: String] = [:]
        variables["DISPLAY"] = x11
        variables["WAYLAND_DISPLAY"] = wayland
        variables["XAUTHORITY"] = xAuthority
        return variables
    }

    /// `:N`, `:N.M` or `unix:N[.M]`: a display of this machine.
    static func isLocalX11Display(_ display: String) -> Bool {
        var rest = Substring(display)
        if rest.hasPrefix("unix") { rest = rest.dropFirst(4) }
        guard rest.hasPrefix(":") else { return false }
        let parts = rest.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count)
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 6 && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// A name like `wayland-0`: letters, digits, `-`, `.`, `_`, and not `.` or `..`.
    static func isSocketName(_ name: String) -> Bool {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._".unicodeScalars)
        return (1...64).contains(name.unicodeScalars.count) && name.unicodeScalars.allSatisfy(allowed.contains)
            && name != "." && name != ".."
    }
}
