import Enclave
import Foundation
import KeychainServer

/// The keychain server in this process, with a caller identity the program states itself.
///
/// Embedded mode does not isolate programs of the same user from one another: any of them can
/// read the keychain files and claim any access group. See README, Security model.
public struct EmbeddedTransport: KeychainTransport {
    let server: KeychainServer
    let caller: CallerIdentity

    /// Opens the keychain in `directory` for a caller in `accessGroups`.
    ///
    /// - Parameters:
    ///   - directory: the keychain directory; by default `$XDG_DATA_HOME/keychain`.
    ///   - accessGroups: the caller's groups, default group first; by default the program's name.
    ///   - isOwnerTool: true for the device owner's tool, which sees every group.
    ///   - sharedUnlock: keep unlocked class keys in the user's kernel keyring, so that one
    ///     unlock serves this user's other processes until lock or reboot (falls back to this
    ///     process's memory where the kernel refuses).
    public init(
        directory: URL = EmbeddedTransport.defaultDirectory(), accessGroups: [String] = [EmbeddedTransport.defaultAccessGroup()],
        isOwnerTool: Bool = false, sharedUnlock: Bool = true
    ) throws(KeychainError) {
        var cache: any ClassKeyCache = ProcessClassKeyCache()
        if sharedUnlock, let keyring = KernelKeyringClassKeyCache() { cache = keyring }
        try self.init(server: KeychainServer(directory: directory, cache: cache), caller: CallerIdentity(accessGroups: accessGroups, isOwnerTool: isOwnerTool))
    }

    /// Serves `caller` from an already open server.
    public init(server: KeychainServer, caller: CallerIdentity) {
        self.server = server
        self.caller = caller
    }

    public func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try server.handle(request, caller: caller)
    }

    /// `$XDG_DATA_HOME/keychain`, or `~/.local/share/keychain` when `XDG_DATA_HOME` is unset.
    public static func defaultDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appendingPathComponent("keychain")
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/keychain")
    }

    /// The program's name, as its default access group.
    public static func defaultAccessGroup() -> String {
        ProcessInfo.processInfo.processName
    }
}
