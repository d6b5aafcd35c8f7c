// The idioms of Apple's sample "Storing CryptoKit Keys in the Keychain" (with `import Crypto`
// for `import CryptoKit`): a key's bytes turned into Data through CFDataCreateWithBytesNoCopy
// and kCFAllocatorNull, stored as a generic password and read back; and the bundle identifier
// read with kCFBundleIdentifierKey.
import Crypto
import Foundation
import Security

extension ContiguousBytes {
    /// A Data instance created from the contiguous bytes, as the sample writes it.
    var dataRepresentation: Data {
        return self.withUnsafeBytes { bytes in
            let cfdata = CFDataCreateWithBytesNoCopy(
                nil, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, kCFAllocatorNull)
            return ((cfdata as NSData?) as Data?) ?? Data()
        }
    }
}

enum CryptoKitKeyStore {
    /// Stores a symmetric key as a generic password and reads it back through CFData's accessors.
    static func storeAndReadBack() -> Bool {
        let key = SymmetricKey(size: .bits256)
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrAccount as String: "com.example.cryptokit-key",
            kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
            kSecValueData as String: key.dataRepresentation,
        ]
        guard SecItemAdd(query as CFDictionary, nil) == errSecSuccess else { return false }
        let search: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrAccount as String: "com.example.cryptokit-key",
            kSecReturnData as String: true,
        ]
        var item: CFTypeRef?
        guard SecItemCopyMatching(search as CFDictionary, &item) == errSecSuccess else { return false }
        let data = item as! CFData
        let bytes = UnsafeBufferPointer(start: CFDataGetBytePtr(data), count: CFDataGetLength(data))
        return SymmetricKey(data: Data(bytes)) == key
    }

    /// The bundle identifier as such code reads it; Linux's Foundation gives nil without an
    /// Info.plist beside the executable.
    static func bundleIdentifier() -> String {
        Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String] as? String ?? "none"
    }
}
