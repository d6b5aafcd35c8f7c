// Attribute keys (SecItem.h), with Apple's raw strings.
/// When the item's data can be read; one of the `kSecAttrAccessible…` values.
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// The item's access control: a `SecAccessControl` from `SecAccessControlCreateWithFlags`.
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
/// The item's access group.
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item syncs; `kSecAttrSynchronizableAny` in queries matches both.
///
/// An item may be synchronizable with a `…ThisDeviceOnly` accessibility: it is stored and
/// reported synchronizable, and its accessibility keeps it on this device. Apple's documentation
/// says such an item "may not" be added, but iOS stores it: securityd's add path (`_SecItemAdd`,
/// `s3dl_query_add` in Apple's open-source Security project) has no such check, and a widely
/// used wrapper's test on iOS expects the add to succeed. Only an access control with constraints
/// (Touch ID, passcode, the Enclave) is refused beside `kSecAttrSynchronizable` (`errSecParam`).
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// Matches synchronizable and non-synchronizable items.
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
/// The creation date (read-only).
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// The last modification date (read-only).
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// A user-visible description of the item's kind.
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// A user-editable comment.
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// The creator's four-character code, as a number.
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// The item type's four-character code, as a number.
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// A user-visible label.
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Whether the item is hidden from users.
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder with no valid password.
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// The account name.
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// The service name (generic passwords).
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// User-defined data (generic passwords).
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// The security domain (internet passwords).
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The server's domain name or IP address (internet passwords).
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// The protocol; one of the `kSecAttrProtocol…` values (internet passwords).
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// The authentication scheme; one of the `kSecAttrAuthenticationType…` values.
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// The port number (internet passwords).
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// The path (internet passwords).
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
/// The key's class: `kSecAttrKeyClassPublic`, `…Private` or `…Symmetric`.
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
/// The key's application label (data).
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
/// Whether the key is stored permanently.
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
/// The key's private tag (data).
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
/// The key's algorithm; one of the `kSecAttrKeyType…` values.
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
/// The key's size in bits.
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
/// The key's effective size in bits.
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"
/// Whether the key can encrypt.
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
/// Whether the key can decrypt.
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
/// Whether the key can derive other keys.
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
/// Whether the key can sign.
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
/// Whether the key can verify signatures.
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
/// Whether the key can wrap other keys.
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
/// Whether the key can unwrap other keys.
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"
/// The token a key lives in: `kSecAttrTokenIDSecureEnclave` for a key generated inside the
/// Enclave. Immutable once the key exists.
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"
/// `kSecAttrTokenID`'s one value: the Secure Enclave.
nonisolated(unsafe) public let kSecAttrTokenIDSecureEnclave: CFString = "com.apple.setoken"
/// The certificate's type (`CSSM_CERT_X_509v1`…`v3`: 1 to 3), read-only, derived from it.
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
/// The certificate's encoding (`CSSM_CERT_ENCODING_DER`: 3), derived from it.
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"
/// The certificate's subject, derived from it (data).
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
/// The certificate's issuer, derived from it (data).
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
/// The certificate's serial number, derived from it (data).
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
/// The certificate's subject key identifier, derived from it (data).
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
/// The SHA-1 of the certificate's public key, derived from it (data).
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
