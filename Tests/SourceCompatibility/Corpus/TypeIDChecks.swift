// The idiom of code that checks a keychain result's Core Foundation type before it casts:
// `CFGetTypeID(result) == SecKeyGetTypeID()`, then `unsafeDowncast(result, to: SecKey.self)`.
import Foundation
import Security

enum TypeIDChecks {
    /// A key and a data result, each told apart by its type identifier.
    static func tellResultsApart() -> Bool {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
        ]
        var error: Unmanaged<CFError>?
        guard let made = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else { return false }
        let result: CFTypeRef = made
        guard CFGetTypeID(result) == SecKeyGetTypeID() else { return false }
        let key = unsafeDowncast(result, to: SecKey.self)
        let data: CFTypeRef = Data([1, 2, 3]) as CFData
        return SecKeyCopyPublicKey(key) != nil && CFGetTypeID(data) == CFDataGetTypeID()
            && CFGetTypeID(data) != SecKeyGetTypeID() && CFGetTypeID("text" as CFString) == CFStringGetTypeID()
    }
}
