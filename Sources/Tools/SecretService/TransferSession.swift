import KeychainProtocol

/// A client's session (`org.freedesktop.Secret.Session`): how its secrets cross the bus.
enum TransferSession: Sendable {
    /// `plain`: as they are (the bus is local, and its other clients cannot read another's
    /// messages).
    case plain
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7`: encrypted under the negotiated key, a fresh IV
    /// each.
    case encrypted(SecretSessionKey)

    /// The secret struct `(oayays)` carrying `secret` to the client.
    func wireSecret(_ secret: SecretValue, session path: String) -> DBusValue {
        let (parameters, value): ([UInt8], [UInt8]) =
            switch self {
            case .plain: ([], secret.bytes.withUnsafeBytes { Array($0) })
            case .encrypted(let key): key.encrypt(secret.bytes)
            }
        return .structure([.objectPath(path), .bytes(parameters), .bytes(value), .string(secret.contentType)])
    }

    /// The secret a client sent as `(oayays)` fields `parameters` and `value`.
    func secret(parameters: [UInt8], value: [UInt8], contentType: String) throws(DBusFailure) -> SecretValue {
        switch self {
        case .plain:
            guard parameters.isEmpty else {
                throw DBusFailure.invalidArguments("a plain session's secret has no parameters")
            }
            return SecretValue(bytes: SecretBytes(value), contentType: contentType)
        case .encrypted(let key):
            do throws(SecretSessionError) {
                return SecretValue(
                    bytes: try key.decrypt(parameters: parameters, value: value), contentType: contentType)
            } catch {
                throw DBusFailure.invalidArguments("the secret could not be decrypted with the session's key: \(error)")
            }
        }
    }
}
