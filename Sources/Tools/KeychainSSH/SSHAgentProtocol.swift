import Foundation
import Keychain
import Synchronization

/// The OpenSSH agent protocol (draft-miller-ssh-agent) over the keychain's SSH keys: it lists
/// them and signs with them; it holds no key of its own, so adding, removing and locking keys
/// are refused, as are the RSA signature flags (these keys are ECDSA).
///
/// One instance serves one connection: it remembers the session the client bound it to
/// (`session-bind@openssh.com`, once its host key's signature verifies: ``SSHSessionBinding``),
/// which the sheet names and to which a key that asks the owner signs user authentications
/// only (``SSHSignedData``). The sheet names the client by its pid and full executable path.
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

    /// What asked: the client process, for the sheet and the reuse window.
    private let client: SSHAgentClient
    /// The agent whose keys this one also offers, if any.
    private let upstream: SSHAgentUpstream?
    /// Keeps one authentication per key for a while, when the agent was told to.
    private let authentications: SSHAgentAuthentications
    /// The session the client bound this connection to, once verified.
    private let binding = Mutex<SSHSessionBinding?>(nil)

    /// A connection from `client`.
    public init(client: SSHAgentClient, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream? = nil) {
        self.client = client
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
                return Data([Message.identitiesAnswer.rawValue]) + SSHEncoding.uint32(UInt32(identities.count))
                    + identities.reduce(Data(), +)
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
                return try sign(data, with: named, blob: blob)
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
        guard (try? reader.byte()) == Message.identitiesAnswer.rawValue, let count = try? reader.uint32() else {
            return []
        }
        var identities: [Data] = []
        for _ in 0..<min(count, 1024) {
            guard let blob = try? reader.string(), let comment = try? reader.string() else { return [] }
            identities.append(SSHEncoding.string(blob) + SSHEncoding.string(comment))
        }
        return reader.isAtEnd ? identities : []
    }

    /// Signs `data` with `named` (whose blob is `blob`), found again with the context that may
    /// prompt for it. A key that asks the owner signs only what the sheet can name.
    private func sign(_ data: Data, with named: SSHEnclaveKey, blob: Data) throws -> Data {
        var reason = "\(client.description) wants to sign with your SSH key \(named.name)"
        var purpose = "any"
        if named.requiresAuthentication {
            guard
                let (sheet, reuse) = SSHSignedData(Array(data), keyBlob: blob).purpose(boundTo: binding.withLock { $0 })
            else { return Self.failure }
            reason += " " + sheet
            purpose = reuse
        }
        let context = authentications.context(for: named.name, client: client, purpose: purpose, reason: reason)
        guard let key = try SSHKeyStore.find(named.name, context: context, reason: reason) else { return Self.failure }
        return Data([Message.signResponse.rawValue]) + SSHEncoding.string(try key.signature(for: data))
    }

    /// `session-bind@openssh.com`: kept once its signature verifies, refused otherwise (and a
    /// connection already bound is not bound again, as OpenSSH's agent does).
    private func handleExtension(_ reader: inout SSHReader) throws -> Data {
        guard String(decoding: try reader.string(), as: UTF8.self) == "session-bind@openssh.com" else {
            return Self.failure
        }
        guard let verified = try SSHSessionBinding(&reader) else { return Self.failure }
        let bound = binding.withLock { binding in
            guard binding == nil || binding == verified else { return false }
            binding = verified
            return true
        }
        return bound ? Data([Message.success.rawValue]) : Self.failure
    }
}
