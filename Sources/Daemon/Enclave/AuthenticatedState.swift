import Crypto
import Foundation
import KeychainProtocol

/// The Enclave's state files (keybag, attempt counter, biometry), each authenticated with a key
/// derived from the device secret and the file's name: an edited field, a file copied over
/// another, or a file from another device fails with `errSecDecode` before anything in it is
/// used.
///
/// Format: JSON `{"format": "swift-keychain NAME vN", "payload": <base64 JSON>, "mac": <base64>}`,
/// the MAC being HMAC-SHA256 over the format line, a zero byte and the payload.
enum AuthenticatedState {
    private struct Envelope: Codable {
        var format: String
        var payload: Data
        var mac: Data
    }

    static func key(for name: String, deviceKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: deviceKey, info: Data("swift-keychain state mac v1 \(name)".utf8), outputByteCount: 32)
    }

    private static func format(_ name: String, _ version: Int) -> String { "swift-keychain \(name) v\(version)" }

    private static func authenticated(_ format: String, _ payload: Data) -> Data {
        var bytes = Data(format.utf8)
        bytes.append(0)
        bytes.append(payload)
        return bytes
    }

    /// Encodes `value` as the authenticated file `name`, format `version`.
    static func encode<Value: Encodable>(
        _ value: Value, name: String, version: Int, deviceKey: SymmetricKey
    ) throws(KeychainError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let format = format(name, version)
        guard let payload = try? encoder.encode(value) else {
            throw KeychainError(.errSecInternalComponent, "cannot encode the \(name) state")
        }
        let mac = Data(
            HMAC<SHA256>.authenticationCode(
                for: authenticated(format, payload), using: key(for: name, deviceKey: deviceKey)))
        guard let file = try? encoder.encode(Envelope(format: format, payload: payload, mac: mac)) else {
            throw KeychainError(.errSecInternalComponent, "cannot encode the \(name) state")
        }
        return file
    }

    /// Decodes the authenticated file `name` read from `path`.
    ///
    /// - Throws: `errSecDecode` when the file is not of this format and version, was altered,
    ///   or was written under another device secret.
    static func decode<Value: Decodable>(
        _ data: Data, as type: Value.Type, name: String, version: Int, deviceKey: SymmetricKey, path: String
    ) throws(KeychainError) -> Value {
        let format = format(name, version)
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data), envelope.format == format else {
            throw KeychainError(.errSecDecode, "\(path) is damaged or not a \(format) file; restore it from a copy")
        }
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                envelope.mac, authenticating: authenticated(format, envelope.payload),
                using: key(for: name, deviceKey: deviceKey))
        else {
            throw KeychainError(
                .errSecDecode,
                "\(path) was altered, or belongs with another device secret: its authentication code does not "
                    + "match; restore the file that belongs here"
            )
        }
        guard let value = try? JSONDecoder().decode(Value.self, from: envelope.payload) else {
            throw KeychainError(
                .errSecDecode,
                "\(path) is authentic but its contents do not decode; it was written by an incompatible version")
        }
        return value
    }
}
