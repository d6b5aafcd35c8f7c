import Foundation

/// What a client asks the agent to sign, as far as the agent can tell from the bytes: what the
/// sheet says, and what a key that asks the owner signs at all.
///
/// A key made with an access control signs only what the sheet can name truthfully:
/// - a user authentication (RFC 4252, section 7; or OpenSSH's `publickey-hostbound-v00`) for the
///   very SSH session the client bound with a verified `session-bind@openssh.com`
///   (``SSHSessionBinding``), with this key: "to log in to the host with key … as USER" (the
///   host first, and the user cut to 64 characters, so that no user name pushes it out of view);
/// - a file signature (`ssh-keygen -Y sign`, which git uses; OpenSSH's `SSHSIG` format): "to
///   make a “NAMESPACE” signature".
///
/// Anything else (arbitrary bytes, an authentication for another session or without a binding)
/// is refused for such a key: its signature could serve a purpose the owner never saw. A key
/// without an access control signs whatever it is asked, as OpenSSH's agent does.
enum SSHSignedData: Equatable {
    /// A user authentication request for the session `sessionIdentifier`, as `user`; with the
    /// server's host key when the method is host-bound.
    case userAuthentication(sessionIdentifier: Data, user: String, hostKey: Data?)
    /// An `SSHSIG` file signature in `namespace` (`git`, `file`…).
    case fileSignature(namespace: String)
    /// Anything else.
    case other

    /// `SSH_MSG_USERAUTH_REQUEST`.
    private static let userAuthenticationRequest: UInt8 = 50
    /// The preamble of OpenSSH's signed-data format.
    private static let fileSignaturePreamble = Array("SSHSIG".utf8)

    /// What `data` is, when it is to be signed with the key whose blob is `keyBlob`.
    init(_ data: [UInt8], keyBlob: Data) {
        if data.starts(with: Self.fileSignaturePreamble) {
            var reader = SSHReader(data.dropFirst(Self.fileSignaturePreamble.count))
            if let namespace = try? reader.string(), (try? reader.string()) != nil, (try? reader.string()) != nil,
                (try? reader.string()) != nil, reader.isAtEnd
            {
                self = .fileSignature(namespace: String(decoding: namespace, as: UTF8.self))
                return
            }
        }
        self = Self.userAuthentication(data, keyBlob: keyBlob) ?? .other
    }

    private static func userAuthentication(_ data: [UInt8], keyBlob: Data) -> SSHSignedData? {
        var reader = SSHReader(data)
        guard let session = try? reader.string(), (try? reader.byte()) == userAuthenticationRequest,
            let user = try? reader.string(), (try? reader.string()) != nil,
            let method = try? String(decoding: reader.string(), as: UTF8.self),
            (try? reader.boolean()) == true, (try? reader.string()) != nil,
            let blob = try? reader.string(), Data(blob) == keyBlob
        else { return nil }
        switch method {
        case "publickey":
            guard reader.isAtEnd else { return nil }
            return .userAuthentication(
                sessionIdentifier: Data(session), user: String(decoding: user, as: UTF8.self), hostKey: nil)
        case "publickey-hostbound-v00@openssh.com":
            guard let hostKey = try? reader.string(), reader.isAtEnd else { return nil }
            return .userAuthentication(
                sessionIdentifier: Data(session), user: String(decoding: user, as: UTF8.self), hostKey: Data(hostKey))
        default:
            return nil
        }
    }

    /// A user name as the sheet shows it: at most 64 characters, ending in "…" when cut.
    private static func shown(_ user: String) -> String {
        user.count > 64 ? user.prefix(63) + "…" : user
    }

    /// For a key that asks the owner: what the sheet says it is for (after "wants to sign with
    /// your SSH key NAME"), and the purpose a reuse window is kept for; nil when such a key must
    /// not sign it, given the session the connection is bound to.
    func purpose(boundTo binding: SSHSessionBinding?) -> (sheet: String, reuse: String)? {
        switch self {
        case .userAuthentication(let session, let user, let hostKey):
            guard let binding, binding.sessionIdentifier == session, hostKey == nil || hostKey == binding.hostKey else {
                return nil
            }
            return (
                "to log in to the host with key \(binding.hostFingerprint) as \(Self.shown(user))",
                "host \(binding.hostFingerprint)"
            )
        case .fileSignature(let namespace):
            return ("to make a “\(namespace)” signature (ssh-keygen -Y sign)", "namespace \(namespace)")
        case .other:
            return nil
        }
    }
}
