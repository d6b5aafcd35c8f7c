import Foundation
import KeychainProtocol
import Synchronization

/// The keychain served by `keychaind`, which holds the keys, checks the passcode, matches
/// fingerprints and keeps what authentications earned; this process sends requests and gets
/// results, never a key or a grant. The daemon knows who is calling from the kernel: an app
/// sees its own items only (its access group is its executable), whatever it claims.
///
/// The daemon is started on the first request when none runs. If the daemon restarts, the next
/// request reconnects; an authentication context's earlier success does not carry over (the
/// daemon forgot it with the connection).
public final class DaemonTransport: KeychainTransport {
    private let connection: Mutex<DaemonConnection?>
    private let environment: [String: String]
    private let daemonArguments: [String]

    /// A transport to the daemon of this user (`$XDG_RUNTIME_DIR/keychain/socket`).
    ///
    /// - Parameter daemonArguments: `keychaind`'s arguments, should this transport start it.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, daemonArguments: [String] = []) {
        self.environment = environment
        self.daemonArguments = daemonArguments
        connection = Mutex(nil)
    }

    /// A transport on a connection already open.
    init(connection: sending DaemonConnection, environment: [String: String]) {
        self.environment = environment
        daemonArguments = []
        self.connection = Mutex(connection)
    }

    public func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        var body = RequestParser.encode(request)
        defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        var reply = try exchange(body)
        defer { reply.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        let result: Result<KeychainReply, KeychainError>
        do throws(WireError) {
            result = try ReplyParser.parse(reply)
        } catch {
            throw KeychainError(.errSecDecode, "keychaind's reply could not be read (\(error.reason)); is it the same version as this program?")
        }
        return try result.get()
    }

    /// Sends on the open connection, or on a new one; a request that never left is sent once
    /// more on a new connection (the daemon may have restarted), one that left is not.
    private func exchange(_ body: [UInt8]) throws(KeychainError) -> [UInt8] {
        let outcome: Result<[UInt8], KeychainError> = connection.withLock { connection in
            for attempt in 0..<2 {
                let open: DaemonConnection
                if let connection {
                    open = connection
                } else {
                    do throws(KeychainError) {
                        open = try DaemonLauncher.connect(environment: environment, arguments: daemonArguments)
                    } catch {
                        return .failure(error)
                    }
                }
                connection = open
                do throws(DaemonConnection.Failure) {
                    return .success(try open.exchange(body))
                } catch {
                    connection = nil
                    switch error {
                    case .notSent(let code) where attempt == 1:
                        return .failure(KeychainError(.errSecIO, "cannot send to keychaind: \(String(cString: strerror(code)))"))
                    case .notSent:
                        continue
                    case .noReply(let reason):
                        return .failure(KeychainError(.errSecIO, "keychaind did not answer (\(reason)); the request may or may not have been carried out"))
                    }
                }
            }
            return .failure(KeychainError(.errSecIO, "keychaind does not answer"))
        }
        return try outcome.get()
    }
}
