// Item classes: the values of `kSecClass` (SecItem.h), with Apple's raw strings.
/// The key whose value is the item's class.
public let kSecClass: CFString = "class"
/// A generic password.
public let kSecClassGenericPassword: CFString = "genp"
/// An internet password.
public let kSecClassInternetPassword: CFString = "inet"
/// A certificate (not stored yet: errSecUnimplemented).
public let kSecClassCertificate: CFString = "cert"
/// A cryptographic key.
public let kSecClassKey: CFString = "keys"
/// An identity (not stored yet: errSecUnimplemented).
public let kSecClassIdentity: CFString = "idnt"
