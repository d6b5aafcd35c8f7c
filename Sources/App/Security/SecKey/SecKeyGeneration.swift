import Crypto
import Foundation
import KeychainProtocol
import LocalAuthentication
import _CryptoExtras

/// `SecKeyCreateRandomKey`'s dictionary of attributes for the private key of the pair.
nonisolated(unsafe) public let kSecPrivateKeyAttrs: CFString = "private"
/// `SecKeyCreateRandomKey`'s dictionary of attributes for the public key of the pair.
nonisolated(unsafe) public let kSecPublicKeyAttrs: CFString = "public"

/// Generates a key pair and returns its private key.
///
/// `parameters` holds `kSecAttrKeyType` (`kSecAttrKeyTypeECSECPrimeRandom`: 256, 384 or 521
/// bits, 256 when `kSecAttrKeySizeInBits` is left out; `kSecAttrKeyTypeRSA`: 1,024 to 4,096
/// bits in steps of 8, 2,048 when left out — UNCONFIRMED which defaults iOS takes). With
/// `kSecAttrIsPermanent` (at the top level or in `kSecPrivateKeyAttrs`/`kSecPublicKeyAttrs`),
/// that key is added to the keychain as a `kSecClassKey` item with the other attributes given
/// there (`kSecAttrApplicationTag`, `kSecAttrLabel`, `kSecAttrAccessControl`,
/// `kSecAttrAccessGroup`, …), the per-key dictionaries taking precedence.
///
/// A software key lives in this process's memory, as on iOS. With `kSecAttrTokenID:
/// kSecAttrTokenIDSecureEnclave` (a 256-bit `kSecAttrKeyTypeECSECPrimeRandom` key only, as on
/// Apple's hardware) the key is made inside the Enclave and never leaves it: its
/// `kSecAttrAccessControl` (in `kSecPrivateKeyAttrs` or at the top level) is sealed into it and
/// checked at each signature or key agreement, prompting through `kSecUseAuthenticationContext`
/// (or a new `LAContext`) as reading a protected item does; its item, when kept, holds only the
/// sealed key, and `SecKeyCopyExternalRepresentation` refuses it.
///
/// - Returns: the private key, or nil with `error` set: `errSecParam` for a missing or
///   unknown type or a size the type does not take, or the status of the add that failed.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1823694-seckeycreaterandomkey>
@discardableResult
public func SecKeyCreateRandomKey(
    _ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    reportingFailure(to: error) { () throws(KeychainError) in
        let request = try KeyGenerationRequest(parameters)
        let privateKey = try request.generate()
        try request.store(privateKey)
        return privateKey
    }
}

/// Generates a key pair: the older form of `SecKeyCreateRandomKey`, returning both keys.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1395339-seckeygeneratepair>
@discardableResult
public func SecKeyGeneratePair(
    _ parameters: CFDictionary, _ publicKey: UnsafeMutablePointer<SecKey?>?,
    _ privateKey: UnsafeMutablePointer<SecKey?>?
) -> OSStatus {
    do {
        let request = try KeyGenerationRequest(parameters)
        let generated = try request.generate()
        try request.store(generated)
        publicKey?.pointee = SecKeyCopyPublicKey(generated)
        privateKey?.pointee = generated
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// A key-generation dictionary, parsed.
private struct KeyGenerationRequest {
    enum Kind {
        case ellipticCurve(bits: Int)
        case rsa(bits: Int)
        /// A P-256 key made inside the Enclave, its uses guarded by the access control.
        case enclave(accessControl: AccessControl?)
    }

    let kind: Kind
    /// `kSecUseAuthenticationContext`: the context an Enclave key's uses authenticate with.
    let authentication: AuthenticationOptions
    /// The attributes of each key's item, when that key is to be kept (`kSecAttrIsPermanent`).
    let privateKeyItem: [String: Any]?
    let publicKeyItem: [String: Any]?

    /// Keys that describe the generation itself and go to no item.
    private static let generationKeys = Set(
        [
            kSecAttrKeyType, kSecAttrKeySizeInBits, kSecAttrTokenID, kSecPrivateKeyAttrs, kSecPublicKeyAttrs,
            kSecAttrIsPermanent, kSecClass,
        ].map { $0 as String })

    init(_ parameters: CFDictionary) throws(KeychainError) {
        guard let entries = parameters as? [String: Any] else {
            throw KeychainError(.errSecParam, "the parameters' keys are kSec… constants")
        }
        let context = entries[kSecUseAuthenticationContext as String]
        guard context == nil || context is LAContext else {
            throw KeychainError(.errSecParam, "kSecUseAuthenticationContext takes an LAContext")
        }
        authentication = AuthenticationOptions(context: context as? LAContext)
        let inEnclave = entries[kSecAttrTokenID as String] != nil
        if inEnclave, entries[kSecAttrTokenID as String] as? String != kSecAttrTokenIDSecureEnclave as String {
            throw KeychainError(.errSecParam, "kSecAttrTokenID takes kSecAttrTokenIDSecureEnclave")
        }
        guard let type = entries[kSecAttrKeyType as String] as? String else {
            throw KeychainError(
                .errSecParam, "kSecAttrKeyType is required: kSecAttrKeyTypeECSECPrimeRandom or kSecAttrKeyTypeRSA")
        }
        let bits = try Self.size(entries[kSecAttrKeySizeInBits as String])
        let privateKeyAttributes = entries[kSecPrivateKeyAttrs as String] as? [String: Any]
        if inEnclave {
            guard type == kSecAttrKeyTypeECSECPrimeRandom as String || type == kSecAttrKeyTypeEC as String,
                bits ?? 256 == 256
            else {
                throw KeychainError(
                    .errSecParam,
                    "the Enclave makes 256-bit elliptic-curve keys only (kSecAttrKeyTypeECSECPrimeRandom), as "
                        + "Apple's does"
                )
            }
            let accessControl =
                privateKeyAttributes?[kSecAttrAccessControl as String] ?? entries[kSecAttrAccessControl as String]
            guard accessControl == nil || accessControl is SecAccessControl else {
                throw KeychainError(.errSecParam, "kSecAttrAccessControl takes a SecAccessControl")
            }
            kind = .enclave(accessControl: (accessControl as? SecAccessControl)?.accessControl)
        } else if type == kSecAttrKeyTypeECSECPrimeRandom as String {
            let bits = bits ?? 256
            guard [256, 384, 521].contains(bits) else {
                throw KeychainError(.errSecParam, "an elliptic-curve key has 256, 384 or 521 bits, not \(bits)")
            }
            kind = .ellipticCurve(bits: bits)
        } else if type == kSecAttrKeyTypeRSA as String {
            let bits = bits ?? 2048
            guard (1024...4096).contains(bits), bits % 8 == 0 else {
                throw KeychainError(.errSecParam, "an RSA key has 1,024 to 4,096 bits in steps of 8, not \(bits)")
            }
            kind = .rsa(bits: bits)
        } else {
            throw KeychainError(
                .errSecParam,
                "kSecAttrKeyType \(type) is not generated here: kSecAttrKeyTypeECSECPrimeRandom or kSecAttrKeyTypeRSA")
        }
        let shared = entries.filter { !Self.generationKeys.contains($0.key) }
        let permanent = try Self.flag(entries[kSecAttrIsPermanent as String]) ?? false
        var privateKeyItem = try Self.item(
            entries[kSecPrivateKeyAttrs as String], shared: shared, permanentByDefault: permanent,
            name: "kSecPrivateKeyAttrs")
        if case .enclave(let accessControl) = kind, privateKeyItem != nil {
            // The access control is sealed into the key and checked at each use, as on Apple's
            // hardware: reading the item (its reference) asks for nothing.
            privateKeyItem?.removeValue(forKey: kSecAttrAccessControl as String)
            privateKeyItem?[kSecAttrAccessible as String] =
                (accessControl?.protection ?? Self.enclaveDefaultAccessibility).rawValue
        }
        self.privateKeyItem = privateKeyItem
        publicKeyItem = try Self.item(
            entries[kSecPublicKeyAttrs as String], shared: shared, permanentByDefault: permanent,
            name: "kSecPublicKeyAttrs")
    }

    /// An Enclave key's accessibility without an access control: CryptoKit's default.
    private static let enclaveDefaultAccessibility = Accessibility.whenUnlockedThisDeviceOnly

    func generate() throws(KeychainError) -> SecKey {
        switch kind {
        case .enclave(let accessControl):
            let accessibility = accessControl?.protection ?? Self.enclaveDefaultAccessibility
            return SecKey(
                .enclave(
                    try EnclavePrivateKey.create(
                        accessibility: accessibility, accessControl: accessControl, authentication: authentication)))
        case .ellipticCurve(256): return SecKey(.p256(P256.Signing.PrivateKey()))
        case .ellipticCurve(384): return SecKey(.p384(P384.Signing.PrivateKey()))
        case .ellipticCurve: return SecKey(.p521(P521.Signing.PrivateKey()))
        case .rsa(let bits):
            do {
                return SecKey(.rsa(try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: bits))))
            } catch {
                throw KeychainError(.errSecParam, "an RSA key of \(bits) bits could not be generated")
            }
        }
    }

    /// Adds the keys asked to be kept; a public key that cannot be added takes its private key
    /// out again, so that a failed call leaves nothing behind.
    func store(_ privateKey: SecKey) throws(KeychainError) {
        if let privateKeyItem { try add(privateKey, privateKeyItem) }
        guard let publicKeyItem else { return }
        do {
            try add(SecKey(privateKey.publicKey), publicKeyItem)
        } catch {
            if privateKeyItem != nil { _ = SecItemDelete([kSecValueRef as String: privateKey] as NSDictionary) }
            throw error
        }
    }

    private func add(_ key: SecKey, _ attributes: [String: Any]) throws(KeychainError) {
        var item = attributes
        item[kSecClass as String] = kSecClassKey
        item[kSecValueRef as String] = key
        let status = SecItemAdd(item as NSDictionary, nil)
        guard status == errSecSuccess else {
            throw KeychainError(failedStatus: status, "the key could not be added to the keychain")
        }
    }

    /// The item attributes of one key of the pair: the shared ones overridden by its own
    /// dictionary; nil when it is not kept.
    private static func item(
        _ value: Any?, shared: [String: Any], permanentByDefault: Bool, name: String
    ) throws(KeychainError) -> [String: Any]? {
        var own: [String: Any] = [:]
        if let value {
            guard let dictionary = value as? [String: Any] else {
                throw KeychainError(.errSecParam, "\(name) takes a dictionary of attributes")
            }
            own = dictionary
        }
        guard try flag(own.removeValue(forKey: kSecAttrIsPermanent as String)) ?? permanentByDefault else { return nil }
        return shared.merging(own) { _, ownValue in ownValue }
    }

    private static func size(_ value: Any?) throws(KeychainError) -> Int? {
        switch value {
        case nil: return nil
        case let number as NSNumber: return number.intValue
        case let string as String:
            guard let bits = Int(string) else { break }
            return bits
        default: break
        }
        throw KeychainError(.errSecParam, "kSecAttrKeySizeInBits takes a number of bits")
    }

    private static func flag(_ value: Any?) throws(KeychainError) -> Bool? {
        switch value {
        case nil: return nil
        case let number as NSNumber: return number.boolValue
        default: throw KeychainError(.errSecParam, "kSecAttrIsPermanent takes a boolean")
        }
    }
}
