/// A transport that answers every request with one error: the keychain a program asked for is
/// not one it can reach.
struct RefusingTransport: KeychainTransport {
    let error: KeychainError

    init(_ error: KeychainError) {
        self.error = error
    }

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        throw error
    }
}
