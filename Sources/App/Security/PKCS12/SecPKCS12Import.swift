import Foundation
import KeychainProtocol

/// `kSecImportExportPassphrase`: the options key for the file's passphrase (a string).
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = "passphrase"
/// `kSecImportItemLabel`: an imported identity's label (the file's friendly name for it).
nonisolated(unsafe) public let kSecImportItemLabel: CFString = "label"
/// `kSecImportItemKeyID`: an imported identity's key identifier (the file's local key ID).
nonisolated(unsafe) public let kSecImportItemKeyID: CFString = "keyid"
/// `kSecImportItemTrust`: on Apple platforms, a `SecTrust` for the identity's certificate.
/// This package has no trust evaluation, so the key is never in a result.
nonisolated(unsafe) public let kSecImportItemTrust: CFString = "trust"
/// `kSecImportItemCertChain`: an imported identity's certificate chain, its own certificate
/// first.
nonisolated(unsafe) public let kSecImportItemCertChain: CFString = "chain"
/// `kSecImportItemIdentity`: the imported `SecIdentity`.
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = "identity"

/// Reads the identities of a PKCS #12 file (`.p12`, `.pfx`).
///
/// As on iOS the identities are returned, not stored: add one with
/// `SecItemAdd([kSecValueRef: identity])`. Each result dictionary has `kSecImportItemIdentity`,
/// `kSecImportItemCertChain` (the identity's certificate, then the file's certificates that
/// issued it, in order), `kSecImportItemLabel` (the file's friendly name, else the
/// certificate's subject summary) and `kSecImportItemKeyID` when the file gives one. There is
/// no `kSecImportItemTrust`: this package has no `SecTrust`.
///
/// A key is paired with the certificate whose public key is its own. Certificates without their
/// key only appear in chains; a file with no identity gives an empty array.
///
/// Supported: PBES2 (PBKDF2 with AES-CBC) encryption, as OpenSSL 3, Apple's tools and current
/// Java write, with swift-crypto; PKCS #12's legacy 3DES and RC2 encryption (OpenSSL 1.1,
/// `openssl pkcs12 -legacy`, older exports) with OpenSSL's libcrypto (``PKCS12LegacyCipher``);
/// an HMAC-SHA-1/256/384/512 integrity MAC.
///
/// - Parameters:
///   - pkcs12_data: The file's bytes.
///   - options: `kSecImportExportPassphrase`; a missing passphrase is the empty one
///     (UNCONFIRMED: what iOS does without one is not documented).
///   - items: Set to the array of identities on success.
/// - Returns: errSecSuccess; errSecAuthFailed for a wrong passphrase (or a file changed since
///   its MAC was made); errSecDecode for data that is not such a file; errSecUnimplemented for
///   another cipher (public-key encryption); errSecParam for a passphrase that is not a string.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/1396915-secpkcs12import>
@discardableResult
public func SecPKCS12Import(
    _ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    items.pointee = nil
    do throws(KeychainError) {
        let passphrase = options[kSecImportExportPassphrase as String]
        guard passphrase == nil || passphrase is String else {
            throw KeychainError(.errSecParam, "kSecImportExportPassphrase takes a string")
        }
        let archive = try PKCS12Archive(der: pkcs12_data as Data, passphrase: passphrase as? String ?? "")
        items.pointee = NSArray(array: archive.keys.compactMap { importedIdentity($0, in: archive) })
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// The result dictionary of one key whose certificate is in the archive.
private func importedIdentity(_ keyBag: PKCS12Archive.KeyBag, in archive: PKCS12Archive) -> NSDictionary? {
    guard let publicKey = SecKeyCopyPublicKey(keyBag.key),
        let own = archive.certificates.first(where: { SecCertificateCopyKey($0.certificate) == publicKey })
    else { return nil }
    var chain = [own.certificate]
    while let last = chain.last, last.certificate.issuer != last.certificate.subject,
        let issuer = archive.certificates.first(where: {
            $0.certificate.certificate.subject == last.certificate.issuer && !chain.contains($0.certificate)
        })
    {
        chain.append(issuer.certificate)
    }
    var entries: [String: AnyObject] = [
        kSecImportItemIdentity as String: SecIdentity(certificate: own.certificate, privateKey: keyBag.key),
        kSecImportItemCertChain as String: NSArray(array: chain),
    ]
    if let label = keyBag.attributes.friendlyName ?? own.attributes.friendlyName ?? own.certificate.subjectSummary {
        entries[kSecImportItemLabel as String] = label as NSString
    }
    if let keyID = keyBag.attributes.localKeyID ?? own.attributes.localKeyID {
        entries[kSecImportItemKeyID as String] = keyID as NSData
    }
    return NSDictionary(dictionary: entries)
}
