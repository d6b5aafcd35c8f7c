/// Carries a typed request to the keychain server and its reply back.
///
/// ``DaemonTransport`` carries it over a Unix socket to `keychaind`; the embedded keychain
/// (`EmbeddedTransport`, in the `KeychainEmbedded` library) runs the server in this process.
public protocol KeychainTransport: Sendable {
    /// Performs one request.
    ///
    /// - Throws: the server's ``KeychainError``.
    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply
}
