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
///
/// A connection on which the client ever bound a session marked as forwarding (the local ssh
/// forwarding the agent to a host, `ssh -A`) is forwarded for the rest of its life
/// (``SSHConnectionBinds``): its requests come from a program on that host. Each key's
/// ``SSHForwardingPolicy`` decides whether it signs for it; the sheet names the hosts it was
/// forwarded to and the host the request logs in to; and no reuse window serves it, nor does it
/// open one.
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
    /// The sessions the client bound this connection to, once verified.
    private let binds = Mutex(SSHConnectionBinds())

    /// Whether the client has gone (exited, or closed the connection): a sheet shown for it is
    /// then taken down.
    private let clientHasGone: @Sendable () -> Bool

    /// A connection from `client`; `clientHasGone` says, while a signature waits for the owner,
    /// whether the client is still there to want it.
    public init(
        client: SSHAgentClient, authentications: SSHAgentAuthentications, upstream: SSHAgentUpstream? = nil,
        clientHasGone: @escaping @Sendable () -> Bool = { false }
    ) {
        self.client = client
        self.upstream = upstream
        self.authentications = authentications
        self.clientHasGone = clientHasGone
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
    /// prompt for it. A key that asks the owner signs only what the sheet can name; over a
    /// forwarded connection, a key signs as its forwarding policy says, with a context of its own.
    private func sign(_ data: Data, with named: SSHEnclaveKey, blob: Data) throws -> Data {
        let binds = binds.withLock { $0 }
        let policy = binds.isForwarded ? SSHForwardingPolicy.of(named) : .allow
        guard policy != .refuse else { return Self.failure }
        var reason = client.description
        if binds.isForwarded {
            let hosts = binds.forwardedTo.map { "the host with key \($0.hostFingerprint)" }
            reason += ", through the agent forwarded to \(hosts.joined(separator: ", then to ")),"
        }
        reason += " wants to sign with your SSH key \(named.name)"
        let purpose = SSHSignedData(Array(data), keyBlob: blob).purpose(boundTo: binds.session)
        if named.requiresAuthentication {
            guard let purpose else { return Self.failure }
            reason += " " + purpose.sheet
        } else if let purpose, policy == .ask {
            reason += " " + purpose.sheet
        }
        let context =
            binds.isForwarded
            ? authentications.context(once: reason, client: client)
            : authentications.context(
                for: named.name, client: client, purpose: purpose?.reuse ?? "any", reason: reason)
        let watch = ClientWatch(context, authentications: authentications, clientHasGone: clientHasGone)
        defer { watch.end() }
        if policy == .ask, !named.requiresAuthentication {
            guard SSHAgentAuthentications.askOwner(context, reason: reason) else { return Self.failure }
        }
        guard let key = try SSHKeyStore.find(named.name, context: context, reason: reason) else { return Self.failure }
        return Data([Message.signResponse.rawValue]) + SSHEncoding.string(try key.signature(for: data))
    }

    /// `session-bind@openssh.com`: kept once its signature verifies, as ``SSHConnectionBinds``
    /// takes it; refused otherwise.
    private func handleExtension(_ reader: inout SSHReader) throws -> Data {
        guard String(decoding: try reader.string(), as: UTF8.self) == "session-bind@openssh.com" else {
            return Self.failure
        }
        guard let verified = try SSHSessionBinding(&reader) else { return Self.failure }
        return binds.withLock { $0.take(verified) } ? Data([Message.success.rawValue]) : Self.failure
    }
}
