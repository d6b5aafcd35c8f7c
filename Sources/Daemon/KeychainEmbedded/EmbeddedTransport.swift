import Enclave
import Foundation
import KeychainClient
import KeychainPrompt
import KeychainProtocol
import KeychainServer
import KeychainSupport
import Synchronization

/// The keychain server in this process, with a caller identity the program states itself.
///
/// The keychain is opened on the first request, and created only by a request that writes
/// (adding an item, setting a passcode): until then, requests that only look get the answers of
/// an empty keychain and nothing is written (``KeychainServer/replyWithoutKeychain(_:)``).
///
/// Embedded mode does not isolate programs of the same user from one another: any of them can
/// read the keychain files and claim any access group. See Docs/SecurityModel.md.
public struct EmbeddedTransport: KeychainTransport {
    private let keychain: OnDemandKeychain
    let caller: CallerIdentity
    private let prompts: any PromptProvider

    /// Opens the keychain in `directory` for a caller in `accessGroups`.
    ///
    /// - Parameters:
    ///   - directory: the keychain directory; by default `$XDG_DATA_HOME/keychain`.
    ///   - accessGroups: the caller's groups, default group first; by default the program's name.
    ///   - actsForOwner: true for the device owner's tool, which sees every group.
    ///   - sharedUnlock: keep unlocked class keys in the user's kernel keyring, so that one
    ///     unlock serves this user's other processes until lock or reboot (falls back to this
    ///     process's memory where the kernel refuses).
    ///   - prompts: where owner authentications draw their sheet; by default this process's
    ///     terminal, under the program's name.
    public init(
        directory: URL = EmbeddedTransport.defaultDirectory(),
        accessGroups: [String] = [EmbeddedTransport.defaultAccessGroup()],
        actsForOwner: Bool = false, sharedUnlock: Bool = true,
        prompts: any PromptProvider = TerminalPrompts(appName: ProcessInfo.processInfo.processName)
    ) {
        self.prompts = prompts
        var cache: any ClassKeyCache = ProcessClassKeyCache()
        if sharedUnlock, let keyring = KernelKeyringClassKeyCache() { cache = keyring }
        keychain = OnDemandKeychain(directory: directory, cache: cache)
        caller = CallerIdentity(accessGroups: accessGroups, actsForOwner: actsForOwner)
    }

    /// Serves `caller` from an already open server, drawing sheets through `prompts`.
    public init(
        server: KeychainServer, caller: CallerIdentity,
        prompts: any PromptProvider = TerminalPrompts(appName: ProcessInfo.processInfo.processName)
    ) {
        keychain = OnDemandKeychain(server: server)
        self.caller = caller
        self.prompts = prompts
    }

    public func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try keychain.perform(request, caller: caller, prompts: prompts)
    }

    /// `$XDG_DATA_HOME/keychain`, or `~/.local/share/keychain` when `XDG_DATA_HOME` is unset.
    public static func defaultDirectory() -> URL {
        KeychainPaths.keychainDirectory()
    }

    /// The program's name, as its default access group.
    public static func defaultAccessGroup() -> String {
        ProcessInfo.processInfo.processName
    }
}
