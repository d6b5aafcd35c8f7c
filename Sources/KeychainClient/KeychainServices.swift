import Synchronization

/// The transport the SecItem functions and ``Keychain`` use.
///
/// By default the first call opens an ``EmbeddedTransport`` on `$XDG_DATA_HOME/keychain` with
/// the program's name as its access group. Set another before the first call to change that:
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
            let opened = EmbeddedTransport()
            transport = opened
            return opened
        }
    }

    /// Performs a request on the current transport.
    public static func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try currentTransport().perform(request)
    }
}
