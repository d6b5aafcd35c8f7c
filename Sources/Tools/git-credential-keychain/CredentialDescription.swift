import Foundation

/// What git tells a credential helper about a credential (gitcredentials(7), "Custom helpers";
/// git-credential(1), "Input/Output format"): `key=value` lines up to a blank line or the end.
///
/// Only the keys a stored credential is found by are kept: `protocol`, `host` (with its port),
/// `path`, `username` and `password`. Others (`capability[]`, `wwwauth[]`,
/// `password_expiry_utc`…) are ignored, as `git-credential-osxkeychain` ignores them.
struct CredentialDescription: Equatable {
    var `protocol`: String?
    /// The host without its port.
    var host: String?
    var port: Int?
    var path: String?
    var username: String?
    var password: String?

    /// The description in `text`. A key given twice keeps its last value, as git does.
    init(parsing text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = String(line[line.index(after: equals)...])
            switch line[..<equals] {
            case "protocol": self.protocol = value
            case "host": (host, port) = Self.split(host: value)
            case "path": path = value
            case "username": username = value
            case "password": password = value
            default: continue
            }
        }
    }

    init() {}

    /// `example.com:8443` as the host and its port; a host whose part after the last `:` is not
    /// a port (an IPv6 address in brackets keeps its colons) stays whole.
    static func split(host: String) -> (String, Int?) {
        guard let colon = host.lastIndex(of: ":"), !host[colon...].contains("]"),
            let port = Int(host[host.index(after: colon)...]), (1...65535).contains(port)
        else { return (host, nil) }
        return (String(host[..<colon]), port)
    }

    /// The lines git reads back from `get`: the username and the password.
    var answer: String {
        var lines = ""
        if let username { lines += "username=\(username)\n" }
        if let password { lines += "password=\(password)\n" }
        return lines
    }
}
