import Foundation
import Synchronization

/// The transport the SecItem functions and ``Keychain`` use.
///
/// By default the first call opens a ``DaemonTransport`` to the user's `keychaind` (started on
/// demand), where the app's identity comes from the kernel. A program that links the embedded
/// keychain (the `KeychainEmbedded` library: the server in the program's own process, with none
/// of the daemon's protections) sets its transport before the first call:
///
/// ```swift
/// ProcessKeychain.transport = EmbeddedTransport(accessGroups: ["com.example.chores"])
/// ```
///
/// A program that does not link it cannot be switched to it: with `KEYCHAIN_MODE=embedded` in
/// its environment, and no transport set, every call fails with `errSecNotAvailable`.
public enum ProcessKeychain {
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

    /// False when the environment asks for the embedded keychain (`KEYCHAIN_MODE=embedded`),
    /// which only a program that links it can honour (keychainctl does).
    public static var usesDaemon: Bool {
        guard let mode = getenv("KEYCHAIN_MODE") else { return true }
        return strcmp(mode, "embedded") != 0
    }

    /// The transport a program gets when it sets none: keychaind, or, when the environment asks
    /// for the embedded keychain, one that refuses every request (this library has none).
    public static func defaultTransport() -> any KeychainTransport {
        usesDaemon ? DaemonTransport() : RefusingTransport(embeddedNotLinked)
    }

    static let embeddedNotLinked = KeychainError(
        .errSecNotAvailable,
        "KEYCHAIN_MODE=embedded, but this program does not include the embedded keychain (the KeychainEmbedded "
            + "library): "
            + "it reaches the keychain through keychaind only. Unset KEYCHAIN_MODE")

    /// Performs a request on the current transport.
    public static func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try currentTransport().perform(request)
    }

    /// Performs a request beside one that may be waiting (``KeychainTransport/performBeside(_:)``).
    public static func performBeside(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try currentTransport().performBeside(request)
    }
}
