import Foundation
import Synchronization

/// The transport the SecItem functions and ``Keychain`` use.
///
/// By default the first call opens a ``DaemonTransport`` to the user's `keychaind` (started on
/// demand), where the app's identity comes from the kernel; with `KEYCHAIN_MODE=embedded` in the
/// environment, an ``EmbeddedTransport`` on `$XDG_DATA_HOME/keychain` with the program's name as
/// its access group (none of the daemon's protections). Set another before the first call to
/// change that:
///
/// ```swift
/// KeychainServices.transport = EmbeddedTransport(accessGroups: ["com.example.chores"])
/// ```
public enum KeychainServices {
    private static let configured = Mutex<(any KeychainTransport)?>(nil)

    /// The transport in use; setting it affects every later call in this process.
    public static var transport: (any KeychainTransport)? {
        get { configured.withLock { $0 } }
        set { configured.withLock { $0 = newValue } }
    }

    /// The configured transport, opening the default one on first use.
    static func currentTransport() -> any KeychainTransport {
        configured.withLock { transport in
            if let transport { return transport }
            let opened = defaultTransport()
            transport = opened
            return opened
        }
    }

    /// How this process reaches the keychain when it sets no transport: the daemon, unless
    /// `KEYCHAIN_MODE=embedded`.
    public static var usesDaemon: Bool {
        guard let mode = getenv("KEYCHAIN_MODE") else { return true }
        return strcmp(mode, "embedded") != 0
    }

    /// The transport ``usesDaemon`` chooses.
    public static func defaultTransport() -> any KeychainTransport {
        usesDaemon ? DaemonTransport() : EmbeddedTransport()
    }

    /// Performs a request on the current transport.
    public static func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try currentTransport().perform(request)
    }
}
