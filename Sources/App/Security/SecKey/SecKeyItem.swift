import Foundation
import KeychainProtocol

extension SecKey {
    /// The attributes of the `kSecClassKey` item that holds this key, as Apple maintains
    /// them: class, type, sizes, application label (the SHA-1 of the public key's external
    /// representation) and what the key can do. The item's data is the key's external
    /// representation.
    ///
    /// `kSecAttrKeyClass` and `kSecAttrKeyType` are kept as their constants' strings, as keys
    /// added with `kSecValueData` have always been (see `ItemClass`).
    var itemAttributes: [String: AttributeValue] {
        var attributes = identifyingAttributes
        attributes[kSecAttrKeySizeInBits as String] = .number(Int64(sizeInBits))
        attributes[kSecAttrEffectiveKeySize as String] = .number(Int64(sizeInBits))
        attributes[kSecAttrIsPermanent as String] = .bool(true)
        for (name, flag) in capabilities { attributes[name as String] = .bool(flag) }
        if enclaveKey != nil { attributes[kSecAttrTokenID as String] = .string(kSecAttrTokenIDSecureEnclave as String) }
        return attributes
    }

    /// The attributes that name this key's item among a group's (a `kSecValueRef` query):
    /// class, type and application label.
    var identifyingAttributes: [String: AttributeValue] {
        [
            kSecAttrKeyClass as String: .string(keyClass as String),
            kSecAttrKeyType as String: .string(keyType as String),
            kSecAttrApplicationLabel as String: .data(applicationLabel),
        ]
    }

    /// The key a `kSecClassKey` item holds, made from its data, class and type; nil for an
    /// item that holds no key of this version's kinds (a symmetric key, other bytes). An Enclave
    /// key's uses authenticate with `authentication`, the query's.
    static func stored(
        _ data: Data, attributes: [String: AttributeValue],
        authentication: AuthenticationOptions = AuthenticationOptions()
    ) -> SecKey? {
        guard case .string(let keyClass)? = attributes[kSecAttrKeyClass as String],
            case .string(let type)? = attributes[kSecAttrKeyType as String]
        else { return nil }
        if case .string(let token)? = attributes[kSecAttrTokenID as String],
            token == kSecAttrTokenIDSecureEnclave as String
        {
            return EnclavePrivateKey(sealedKey: data, authentication: authentication).map { SecKey(.enclave($0)) }
        }
        return make(data, type: type, keyClass: keyClass)
    }
}
