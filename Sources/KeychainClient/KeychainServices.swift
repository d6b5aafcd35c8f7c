import Synchronization

/// The transport the SecItem functions and ``Keychain`` use.
///
/// By default the first call opens an ``EmbeddedTransport`` on `$XDG_DATA_HOME/keychain` with
/// the program's name as its access group. Set another before the first call to change that:
///
/// ```swift
/// KeychainServices.transport = try EmbeddedTransport(accessGroups: ["com.example.chores"])
/// ```
public enum KeychainServices {
    private static let configured = Mutex<(any KeychainTransport)?>(nil)

    /// The transport in use; setting it affects every later call in this process.
    public static var transport: (any KeychainTransport)? {
        get { configured.withLock { $0 } }
        set { configured.withLock { $0 = newValue } }
    }

    /// The configured transport, opening the default one on first use.
    static func currentTransport() throws(KeychainError) -> any KeychainTransport {
        let result: Result<any KeychainTransport, KeychainError> = configured.withLock { transport in
            if let transport { return .success(transport) }
            do throws(KeychainError) {
                let opened = try EmbeddedTransport()
                transport = opened
                return .success(opened)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Performs a request on the current transport.
    public static func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try currentTransport().perform(request)
    }
}
