import Crypto
import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The system daemon's app registry: one root-owned JSON file per app in `/etc/keychain/apps.d/`
/// naming the app as Apple's entitlements do: its application identifier, how it is recognised,
/// its `keychain-access-groups`, (optional) its `com.apple.security.application-groups`, and
/// (optional) `"prompt-agent": true` for the program that draws its users' sheets, or
/// `"secret-service-bridge": true` for the one that serves their Secret Service.
///
/// ```json
/// {
///   "identifier": "com.example.mail",
///   "executable": "/usr/bin/example-mail",
///   "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
///   "keychain-access-groups": ["com.example.mail", "com.example.shared"]
/// }
/// ```
///
/// An app is recognised by exactly one of `executable` (a native program's path), `flatpak`
/// (a Flatpak app id, e.g. `"flatpak": "org.example.Mail"`) or `snap` (a snap's name), each
/// believed only as ``SandboxedApp`` and ``ExecutableTrust`` confirm it. `sha256` (optional)
/// pins the contents of the file the app runs. Identifiers and groups must not start with `/`
/// or hold `:` (those name unregistered and untrusted apps). The directory and each file must
/// belong to root and be writable by nobody else; a file that is not, or that does not parse,
/// registers nothing and is reported (``problems``), never half-used.
struct AppRegistry: Sendable {
    /// One registered app.
    struct App: Codable, Sendable, Equatable {
        var identifier: String
        var executable: String?
        var flatpak: String?
        var snap: String?
        var sha256: String?
        var keychainAccessGroups: [String]
        var applicationGroups: [String]?
        /// True for the prompt agent: the program that draws its user's sheets (``PromptAgents``).
        var promptAgent: Bool?
        /// True for the Secret Service bridge: the program that may act for its user's D-Bus
        /// clients (``KeychainRequest/actForProcess(_:)``).
        var secretServiceBridge: Bool?

        enum CodingKeys: String, CodingKey {
            case identifier, executable, flatpak, snap, sha256
            case keychainAccessGroups = "keychain-access-groups"
            case applicationGroups = "com.apple.security.application-groups"
            case promptAgent = "prompt-agent"
            case secretServiceBridge = "secret-service-bridge"
        }

        /// How it is recognised: its executable's path, `flatpak:ID` or `snap:NAME`; nil unless
        /// exactly one is given.
        var recognitionKey: String? {
            switch (executable, flatpak, snap) {
            case (let path?, nil, nil): path
            case (nil, let id?, nil): "flatpak:" + id
            case (nil, nil, let name?): "snap:" + name
            default: nil
            }
        }

        /// The app's access groups, the default (where items go without `kSecAttrAccessGroup`)
        /// first, in the order of a declared app's (``AppDeclaration/accessGroups``): its
        /// `keychain-access-groups`, its identifier, its application groups.
        var accessGroups: [String] {
            AppDeclaration(
                applicationIdentifier: identifier, keychainAccessGroups: keychainAccessGroups,
                applicationGroups: applicationGroups ?? []
            ).accessGroups
        }
    }

    /// The apps registered, by ``App/recognitionKey``.
    let apps: [String: App]
    /// Files that registered nothing, and why.
    let problems: [String]

    /// The registry in `directory`; a missing directory is an empty registry.
    init(directory: URL) {
        var apps: [String: App] = [:]
        var problems: [String] = []
        var info = stat()
        guard lstat(directory.path, &info) == 0 else {
            self.apps = [:]
            self.problems = []
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == 0, info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            self.apps = [:]
            self.problems = ["\(directory.path) is not a directory only root can change; no app is registered"]
            return
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
            $0.hasSuffix(".json")
        }.sorted()
        for name in names {
            let path = directory.appendingPathComponent(name).path
            do throws(Refusal) {
                let app = try Self.read(path)
                guard let key = app.recognitionKey else {
                    throw Refusal("it must name exactly one of executable, flatpak and snap")
                }
                guard apps[key] == nil else { throw Refusal("\(key) is registered twice") }
                apps[key] = app
            } catch {
                problems.append("\(path): \(error.reason); it registers nothing")
            }
        }
        self.apps = apps
        self.problems = problems
    }

    /// The app registered under `key` (an executable's path, `flatpak:ID`, `snap:NAME`);
    /// `contents` gives the running file's SHA-256 when the registration pins it. Nil when none
    /// is registered, or when the pin does not match (then the reason).
    func app(for key: String, contents: () -> String?) -> (App?, mismatch: String?) {
        guard let app = apps[key] else { return (nil, nil) }
        if let pinned = app.sha256, contents() != pinned.lowercased() {
            return (nil, "\(key) is not the build registered for \(app.identifier) (its SHA-256 differs from the pin)")
        }
        return (app, nil)
    }

    /// The SHA-256 of the file process `pid` runs, in lowercase hex.
    static func sha256(ofRunningFile pid: Int32) -> String? {
        guard let descriptor = ProcessFiles.open(pid, .executableContents) else { return nil }
        defer { close(descriptor) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func read(_ path: String) throws(Refusal) -> App {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw Refusal("cannot be opened (\(String(cString: strerror(errno))))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == 0,
            info.st_mode & (S_IWGRP | S_IWOTH) == 0
        else {
            close(descriptor)
            throw Refusal("not a file only root can change")
        }
        guard info.st_size <= 64 * 1024 else {
            close(descriptor)
            throw Refusal("larger than 64 KiB")
        }
        let data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true).readDataToEndOfFile()
        let app: App
        do {
            app = try JSONDecoder().decode(App.self, from: data)
        } catch {
            throw Refusal("not a registration (\(error))")
        }
        for name in [app.identifier] + app.keychainAccessGroups + (app.applicationGroups ?? []) {
            guard AppDeclaration.canName(name) else {
                throw Refusal(
                    "\"\(name)\" cannot name an app or a group (empty, over 255 bytes, or with a leading / or a :)")
            }
        }
        if let executable = app.executable, !executable.hasPrefix("/") {
            throw Refusal("the executable must be an absolute path")
        }
        if let id = app.flatpak, !SandboxedApp.isFlatpakID(id) { throw Refusal("\"\(id)\" is not a Flatpak app id") }
        if let name = app.snap, !SandboxedApp.isSnapName(Substring(name)) {
            throw Refusal("\"\(name)\" is not a snap name")
        }
        if let pin = app.sha256, pin.count != 64 || !pin.allSatisfy(\.isHexDigit) {
            throw Refusal("sha256 must be 64 hexadecimal digits")
        }
        return app
    }
}
