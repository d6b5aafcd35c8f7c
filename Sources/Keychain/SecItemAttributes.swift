// Attribute keys (SecItem.h), with Apple's raw strings.
/// When the item's data can be read; one of the `kSecAttrAccessible…` values.
public let kSecAttrAccessible: CFString = "pdmn"
/// An access control object (not supported yet: errSecUnimplemented).
public let kSecAttrAccessControl: CFString = "accc"
/// The item's access group.
public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item syncs; `kSecAttrSynchronizableAny` in queries matches both.
public let kSecAttrSynchronizable: CFString = "sync"
/// Matches synchronizable and non-synchronizable items.
public let kSecAttrSynchronizableAny: CFString = "syna"
/// The creation date (read-only).
public let kSecAttrCreationDate: CFString = "cdat"
/// The last modification date (read-only).
public let kSecAttrModificationDate: CFString = "mdat"
/// A user-visible description of the item's kind.
public let kSecAttrDescription: CFString = "desc"
/// A user-editable comment.
public let kSecAttrComment: CFString = "icmt"
/// The creator's four-character code, as a number.
public let kSecAttrCreator: CFString = "crtr"
/// The item type's four-character code, as a number.
public let kSecAttrType: CFString = "type"
/// A user-visible label.
public let kSecAttrLabel: CFString = "labl"
/// Whether the item is hidden from users.
public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder with no valid password.
public let kSecAttrIsNegative: CFString = "nega"
/// The account name.
public let kSecAttrAccount: CFString = "acct"
/// The service name (generic passwords).
public let kSecAttrService: CFString = "svce"
/// User-defined data (generic passwords).
public let kSecAttrGeneric: CFString = "gena"
/// The security domain (internet passwords).
public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The server's domain name or IP address (internet passwords).
public let kSecAttrServer: CFString = "srvr"
/// The protocol; one of the `kSecAttrProtocol…` values (internet passwords).
public let kSecAttrProtocol: CFString = "ptcl"
/// The authentication scheme; one of the `kSecAttrAuthenticationType…` values.
public let kSecAttrAuthenticationType: CFString = "atyp"
/// The port number (internet passwords).
public let kSecAttrPort: CFString = "port"
/// The path (internet passwords).
public let kSecAttrPath: CFString = "path"
/// The key's class: `kSecAttrKeyClassPublic`, `…Private` or `…Symmetric`.
public let kSecAttrKeyClass: CFString = "kcls"
/// The key's application label (data).
public let kSecAttrApplicationLabel: CFString = "klbl"
/// Whether the key is stored permanently.
public let kSecAttrIsPermanent: CFString = "perm"
/// The key's private tag (data).
public let kSecAttrApplicationTag: CFString = "atag"
/// The key's algorithm; one of the `kSecAttrKeyType…` values.
public let kSecAttrKeyType: CFString = "type"
/// The key's size in bits.
public let kSecAttrKeySizeInBits: CFString = "bsiz"
/// The key's effective size in bits.
public let kSecAttrEffectiveKeySize: CFString = "esiz"
/// Whether the key can encrypt.
public let kSecAttrCanEncrypt: CFString = "encr"
/// Whether the key can decrypt.
public let kSecAttrCanDecrypt: CFString = "decr"
/// Whether the key can derive other keys.
public let kSecAttrCanDerive: CFString = "drve"
/// Whether the key can sign.
public let kSecAttrCanSign: CFString = "sign"
/// Whether the key can verify signatures.
public let kSecAttrCanVerify: CFString = "vrfy"
/// Whether the key can wrap other keys.
public let kSecAttrCanWrap: CFString = "wrap"
/// Whether the key can unwrap other keys.
public let kSecAttrCanUnwrap: CFString = "unwp"
