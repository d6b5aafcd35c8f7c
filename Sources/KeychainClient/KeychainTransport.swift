/// Carries a typed request to the keychain server and its reply back.
///
/// ``EmbeddedTransport`` runs the server in this process; a daemon transport (a Unix socket to
/// `keychaind`) slots in behind the same protocol without changing the public API.
public protocol KeychainTransport: Sendable {
    /// Performs one request.
    ///
    /// - Throws: the server's ``KeychainError``.
    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply
}
