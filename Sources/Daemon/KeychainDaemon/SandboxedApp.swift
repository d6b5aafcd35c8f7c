import Foundation
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// An app in a Flatpak or Snap sandbox, as its sandbox names it: what the system daemon looks
/// at before the executable (``AppIdentity``).
///
/// What a sandbox says is a claim, not a proof: with unprivileged user namespaces any user can
/// make a mount namespace with a `/.flatpak-info` of their own words and a program of their
/// choice at `/app/bin/...`. So a claim is believed only when the process runs the very file
/// installed for that app by root, with nothing of the user's loaded:
/// - Flatpak: `.flatpak-info` (read through `/proc/PID/root`) names the app and its
///   `app-path`, which must be in the system installation, `/var/lib/flatpak/app/ID/` (a user
///   installation's files are the user's to change); the process must run, as the inode, the
///   file at `app-path` that its `/app/...` path names.
/// - Snap: the AppArmor label the kernel gives the peer (`SO_PEERSEC`, `snap.NAME.APP`, in
///   enforce mode), and the process must run, as the inode, the file of that snap under
///   `/snap/NAME/` (a read-only squashfs root mounts).
/// In both, the native checks apply too, as the process sees its own files
/// (``ExecutableTrust``: untraced, no loader variables, every mapped file root's).
///
/// What remains: an app whose program is an interpreter from its runtime (`/usr/bin/python3`
/// in a Flatpak) is not its own file, so it is untrusted; and the genuine program of an app
/// may be run by the user in a namespace of their making with their own data, which is what
/// running the app is.
struct SandboxedApp: Equatable, Sendable {
    /// The key the app registry knows it by, and its default identifier: `flatpak:ID`, `snap:NAME`.
    let registryKey: String
    /// Where its program lives as the process sees it: `/app/`, `/snap/NAME/`.
    let sandboxPrefix: String
    /// The same directory on the host.
    let hostDirectory: String

    /// What a process's sandbox says of it.
    enum Claim: Equatable {
        /// No sandbox claims it: a native process.
        case none
        case app(SandboxedApp)
        /// A sandbox claims it in a way never believed.
        case refused(String)
    }

    /// Where system-wide Flatpak apps are installed.
    static let flatpakInstallation = "/var/lib/flatpak/app/"

    /// The claim for process `pid`, whose peer label is `securityLabel`.
    static func claim(pid: Int32, securityLabel: String?) -> Claim {
        switch flatpakInfo(pid) {
        case .success(let info?): return flatpakClaim(info)
        case .success(nil): return snapClaim(securityLabel)
        case .failure(let refusal): return .refused(refusal.reason)
        }
    }

    struct Refusal: Error {
        var reason: String
    }

    /// The text of process `pid`'s `/.flatpak-info` (nil when it has none): a regular file of at
    /// most 64 KiB, never a link, a pipe or a device the daemon could hang on.
    private static func flatpakInfo(_ pid: Int32) -> Result<String?, Refusal> {
        guard let descriptor = ProcessFiles.open(pid, .flatpakInfo) else {
            switch errno {
            case ENOENT: return .success(nil)
            case EINVAL: return .failure(Refusal(reason: "its /.flatpak-info is not a regular file"))
            default:
                return .failure(
                    Refusal(reason: "its /.flatpak-info cannot be read (\(String(cString: strerror(errno))))"))
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 64 * 1024 else {
            return .failure(Refusal(reason: "its /.flatpak-info is not a file of at most 64 KiB"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { return .failure(Refusal(reason: "its /.flatpak-info cannot be read")) }
        return .success(String(decoding: bytes.prefix(count), as: UTF8.self))
    }

    /// The claim a `.flatpak-info` makes.
    static func flatpakClaim(_ info: String) -> Claim {
        var section = ""
        var values: [String: String] = [:]
        for line in info.split(whereSeparator: \.isNewline) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
            } else if let equals = line.firstIndex(of: "=") {
                values["\(section).\(line[..<equals])"] = String(line[line.index(after: equals)...])
            }
        }
        guard let name = values["Application.name"], isFlatpakID(name) else {
            return .refused("its .flatpak-info names no valid Flatpak app")
        }
        let installed = flatpakInstallation + name + "/"
        guard let path = values["Instance.app-path"], path.hasPrefix(installed),
            !path.split(separator: "/").contains(".."), !path.contains("//")
        else {
            return .refused(
                "its .flatpak-info does not place \(name) in the system installation (\(flatpakInstallation)); a "
                    + "user installation's files are the user's to change"
            )
        }
        return .app(
            SandboxedApp(
                registryKey: "flatpak:" + name, sandboxPrefix: "/app/",
                hostDirectory: path.hasSuffix("/") ? path : path + "/"))
    }

    /// The claim an AppArmor label makes (`snap.NAME.APP (enforce)`); none for another label.
    static func snapClaim(_ label: String?) -> Claim {
        guard let label, label.hasPrefix("snap.") else { return .none }
        let parts = label.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[1] == "(enforce)" else {
            return .refused("its snap confinement \(label) is not enforced")
        }
        let components = parts[0].split(separator: ".")
        guard components.count >= 3, isSnapName(components[1]) else {
            return .refused("\(parts[0]) names no valid snap")
        }
        let prefix = "/snap/\(components[1])/"
        return .app(SandboxedApp(registryKey: "snap:\(components[1])", sandboxPrefix: prefix, hostDirectory: prefix))
    }

    /// Reverse-DNS, as Flatpak requires: at least three elements of letters, digits, `_` and `-`.
    static func isFlatpakID(_ name: String) -> Bool {
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.count <= 255 && elements.count >= 3
            && elements.allSatisfy { element in
                !element.isEmpty
                    && element.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            }
    }

    /// Lower-case letters, digits and hyphens, at most 40, as snapd requires.
    static func isSnapName(_ name: Substring) -> Bool {
        (1...40).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
            && name.contains { $0.isLetter }
    }
}
