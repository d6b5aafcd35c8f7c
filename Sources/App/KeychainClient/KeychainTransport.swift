/// Carries a typed request to the keychain server and its reply back.
///
/// ``DaemonTransport`` carries it over a Unix socket to `keychaind`; the embedded keychain
/// (`EmbeddedTransport`, in the `KeychainEmbedded` library) runs the server in this process.
public protocol KeychainTransport: Sendable {
    /// Performs one request.
    ///
    /// - Throws: the server's ``KeychainError``.
    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply

    /// Performs one request while another may be waiting on this transport: `LAContext`'s
    /// `invalidate()` ends a sheet that another thread waits on. keychaind's transport sends it
    /// on a connection of its own; by default it is ``perform(_:)``.
    func performBeside(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply
}

extension KeychainTransport {
    public func performBeside(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try perform(request)
    }
}
