// Item classes: the values of `kSecClass` (SecItem.h), with Apple's raw strings.
/// The key whose value is the item's class.
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// A generic password.
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// An internet password.
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
/// A certificate (not stored yet: errSecUnimplemented).
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
/// A cryptographic key.
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// An identity (not stored yet: errSecUnimplemented).
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"
