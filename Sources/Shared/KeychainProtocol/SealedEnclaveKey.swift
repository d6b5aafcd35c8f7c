import Foundation

/// An Enclave key as apps hold it (`SecKey` of `kSecAttrTokenIDSecureEnclave`, CryptoKit's
/// `dataRepresentation`): its clear fields, which anyone may read, and its private key sealed
/// with AES-256-GCM by the Enclave that made it, with the clear fields as associated data.
///
/// Apps read the public key and the access control from here without asking the daemon; only
/// the Enclave can open the private key, and a blob whose clear fields were changed fails to
/// open there.
///
/// Layout (``WireWriter`` encoding): format 1, accessibility, encoded access control (empty for
/// none), access group, public key (X9.63), sealed private key (AES-GCM combined).
public struct SealedEnclaveKey: Sendable {
    static let format: UInt8 = 1
    /// The class key the private key is sealed under.
    public var accessibility: Accessibility
    /// What every use must satisfy; nil for none.
    public var accessControl: StoredAccessControl?
    /// The access group the key belongs to: only its members may use it.
    public var accessGroup: String
    /// The public key (X9.63).
    public var publicKey: Data
    /// The private key, sealed (AES-GCM combined form); empty until sealed.
    public var sealedPrivateKey = Data()

    /// The clear fields, which are also the private key's associated data.
    public var clearFields: [UInt8] {
        var writer = WireWriter()
        writer.u8(Self.format)
        writer.string(accessibility.rawValue)
        writer.data(accessControl?.encoded() ?? Data())
        writer.string(accessGroup)
        writer.data(publicKey)
        return writer.finish()
    }

    /// The blob an app holds.
    public var encoded: Data {
        var writer = WireWriter()
        writer.data(sealedPrivateKey)
        return Data(clearFields + writer.finish())
    }

    /// A key's clear fields, before its private key is sealed.
    public init(accessibility: Accessibility, accessControl: StoredAccessControl?, accessGroup: String, publicKey: Data)
    {
        self.accessibility = accessibility
        self.accessControl = accessControl
        self.accessGroup = accessGroup
        self.publicKey = publicKey
    }

    /// Reads a blob.
    ///
    /// - Throws: `errSecDecode` for bytes that are not a sealed key.
    public init(decoding bytes: Data) throws(KeychainError) {
        let malformed = KeychainError(.errSecDecode, "the data is not a key this keychain's Enclave made")
        var reader = WireReader(Array(bytes))
        let fields: (format: UInt8, accessibility: String, control: Data, group: String, publicKey: Data, sealed: Data)
        do throws(WireError) {
            fields = (
                try reader.u8(), try reader.string(max: 64), try reader.data(max: 512),
                try reader.string(max: KeychainLimits.maximumAttributeSize),
                try reader.data(max: EnclaveKeyOperation.publicKeySize),
                try reader.data(max: 128)
            )
            try reader.finish()
        } catch {
            throw malformed
        }
        guard fields.format == Self.format, let accessibility = Accessibility(rawValue: fields.accessibility) else {
            throw malformed
        }
        self.accessibility = accessibility
        accessControl = fields.control.isEmpty ? nil : try StoredAccessControl.decode(fields.control)
        accessGroup = fields.group
        publicKey = fields.publicKey
        sealedPrivateKey = fields.sealed
    }
}
