// Values of `kSecAttrKeyClass` and `kSecAttrKeyType` (SecItem.h, SecKey.h), with Apple's raw strings.
/// A public key.
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
/// A private key.
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
/// A symmetric key.
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"
/// RSA.
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
/// DSA.
nonisolated(unsafe) public let kSecAttrKeyTypeDSA: CFString = "43"
/// AES.
nonisolated(unsafe) public let kSecAttrKeyTypeAES: CFString = "2147483649"
/// DES.
nonisolated(unsafe) public let kSecAttrKeyTypeDES: CFString = "14"
/// Triple DES.
nonisolated(unsafe) public let kSecAttrKeyType3DES: CFString = "17"
/// RC4.
nonisolated(unsafe) public let kSecAttrKeyTypeRC4: CFString = "25"
/// RC2.
nonisolated(unsafe) public let kSecAttrKeyTypeRC2: CFString = "23"
/// CAST.
nonisolated(unsafe) public let kSecAttrKeyTypeCAST: CFString = "56"
/// Elliptic curve.
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
/// Elliptic curve (NIST prime curves).
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
