// Values of `kSecAttrKeyClass` and `kSecAttrKeyType` (SecItem.h, SecKey.h), with Apple's raw strings.
/// A public key.
public let kSecAttrKeyClassPublic: CFString = "0"
/// A private key.
public let kSecAttrKeyClassPrivate: CFString = "1"
/// A symmetric key.
public let kSecAttrKeyClassSymmetric: CFString = "2"
/// RSA.
public let kSecAttrKeyTypeRSA: CFString = "42"
/// DSA.
public let kSecAttrKeyTypeDSA: CFString = "43"
/// AES.
public let kSecAttrKeyTypeAES: CFString = "2147483649"
/// DES.
public let kSecAttrKeyTypeDES: CFString = "14"
/// Triple DES.
public let kSecAttrKeyType3DES: CFString = "17"
/// RC4.
public let kSecAttrKeyTypeRC4: CFString = "25"
/// RC2.
public let kSecAttrKeyTypeRC2: CFString = "23"
/// CAST.
public let kSecAttrKeyTypeCAST: CFString = "56"
/// Elliptic curve.
public let kSecAttrKeyTypeEC: CFString = "73"
/// Elliptic curve (NIST prime curves).
public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
