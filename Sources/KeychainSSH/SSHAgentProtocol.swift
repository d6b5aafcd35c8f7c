import Foundation
import Keychain
import Synchronization

/// The OpenSSH agent protocol (draft-miller-ssh-agent) over the keychain's SSH keys: it lists
/// them and signs with them; it holds no key of its own, so adding, removing and locking keys
/// are refused, as are the RSA signature flags (these keys are ECDSA).
///
/// One instance serves one connection: it remembers the host the client said it is talking to
/// (`session-bind@openssh.com`), which the prompt names.
public final class SSHAgentConnection: Sendable {
    /// Message numbers.
    enum Message: UInt8 {
        case failure = 5
        case success = 6
        case requestIdentities = 11
        case identitiesAnswer = 12
        case signRequest = 13
        case signResponse = 14
        case `extension` = 27
    }

    /// What asked: the client program's name, for the prompt.
    private let client: String
    /// The client's terminal, where the prompt shows; nil: the agent's own, if it has one.
    private let terminal: String?
    /// The agent whose keys this one also offers, if any.
    private let upstream: SSHAgentUpstream?
    /// Keeps one authentication per key for a while, when the agent was told to.
    private let authentications: SSHAgentAuthentications
    /// The host key's fingerprint the client bound this connection to, if it did.
    private let boundHost = Mutex<String?>(nil)

    /// A connection from `client` (its program's name) on `terminal`.
    public init(client: String, terminal: String? = nil, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream? = nil) {
        self.client = client
        self.terminal = terminal
        self.upstream = upstream
        self.authentications = authentications
    }

    /// The answer to one message (its body, without the length).
    public func answer(_ message: [UInt8]) -> Data {
        var reader = SSHReader(message)
        do {
            switch Message(rawValue: try reader.byte()) {
            case .requestIdentities?:
                let keys = (try? SSHKeyStore.all()) ?? []
                var identities = keys.map { SSHEncoding.string($0.blob) + SSHEncoding.string($0.name) }
                identities += upstreamIdentities()
                return Data([Message.identitiesAnswer.rawValue]) + SSHEncoding.uint32(UInt32(identities.count)) + identities.reduce(Data(), +)
            case .signRequest?:
                let blob = Data(try reader.string())
                let data = Data(try reader.string())
                let flags = try reader.uint32()
                guard reader.isAtEnd else { return Self.failure }
                guard let named = try? SSHKeyStore.all().first(where: { $0.blob == blob }) else {
                    // Not an Enclave key: the other agent's, if there is one (it checks the flags).
                    return upstream?.exchange(message).map { Data($0) } ?? Self.failure
                }
                guard flags == 0 else { return Self.failure }
                return try sign(data, with: named)
            case .extension?:
                return try handleExtension(&reader)
            default:
                return Self.failure
            }
        } catch {
            return Self.failure
        }
    }

    private static var failure: Data { Data([Message.failure.rawValue]) }

    /// The other agent's keys, each as its blob and comment, as its answer lists them.
    private func upstreamIdentities() -> [Data] {
        guard let answer = upstream?.exchange([Message.requestIdentities.rawValue]) else { return [] }
        var reader = SSHReader(answer)
        guard (try? reader.byte()) == Message.identitiesAnswer.rawValue, let count = try? reader.uint32() else { return [] }
        var identities: [Data] = []
        for _ in 0..<min(count, 1024) {
            guard let blob = try? reader.string(), let comment = try? reader.string() else { return [] }
            identities.append(SSHEncoding.string(blob) + SSHEncoding.string(comment))
        }
        return reader.isAtEnd ? identities : []
    }

    /// Signs with `named`, found again with the context that may prompt for it.
    private func sign(_ data: Data, with named: SSHEnclaveKey) throws -> Data {
        var reason = "\(client) wants to sign with your SSH key \(named.name)"
        if let host = boundHost.withLock({ $0 }) { reason += " for the host with key \(host)" }
        let context = authentications.context(for: named.name, reason: reason, terminal: terminal)
        guard let key = try SSHKeyStore.find(named.name, context: context, reason: reason) else { return Self.failure }
        return Data([Message.signResponse.rawValue]) + SSHEncoding.string(try key.signature(for: data))
    }

    /// `session-bind@openssh.com`: the server's host key, the session identifier, the host's
    /// signature over it, and whether the connection is forwarded. The host key is kept for
    /// the prompt; the signature is not checked (this agent makes no decision on it).
    private func handleExtension(_ reader: inout SSHReader) throws -> Data {
        guard String(decoding: try reader.string(), as: UTF8.self) == "session-bind@openssh.com" else { return Self.failure }
        let hostKey = try reader.string()
        _ = try reader.string()
        _ = try reader.string()
        _ = try reader.boolean()
        guard reader.isAtEnd else { return Self.failure }
        boundHost.withLock { $0 = SSHFingerprint.of(blob: Data(hostKey)) }
        return Data([Message.success.rawValue])
    }
}
