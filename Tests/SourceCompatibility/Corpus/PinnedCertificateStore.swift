// The idiom of certificate-pinning code: a server certificate kept in the keychain with
// kSecValueRef and read back with kSecReturnRef as a SecCertificate, its public key compared
// with a pinned one.
import Foundation
import Security

enum PinnedCertificateStore {
    /// A self-signed certificate for corpus.example.com (openssl req -x509, P-256).
    static let pinnedDER = Data(
        base64Encoded: [
            "MIIBszCCAVmgAwIBAgIUY7DJYm/oMUN2M1VV4GILJ/W9JIYwCgYIKoZIzj0EAwIwLzEbMBkGA1UEAwwSY29ycHVzLmV4YW1w",
            "bGUuY29tMRAwDgYDVQQKDAdFeGFtcGxlMB4XDTI2MTEyMzIxMzEyM1oXDTM2MTEyMDIxMzEyM1owLzEbMBkGA1UEAwwSY29y",
            "cHVzLmV4YW1wbGUuY29tMRAwDgYDVQQKDAdFeGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEtqYtGL7dcgooEQKv",
            "Qk5wVpT4/kdf786JgEZZ3UuqorIWyt3R8fQ5wTBVMm1Am3aqY6dnhQWRaXYtnFwJpp4UGKNTMFEwHQYDVR0OBBYEFDsIXPmw",
            "lI2BNLule7jaE3eXhnqDMB8GA1UdIwQYMBaAFDsIXPmwlI2BNLule7jaE3eXhnqDMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI",
            "zj0EAwIDSAAwRQIgb5zASw3PEpDSi8FSUkf/UdqcJlcJZ/lLjLzIGJrK2lcCIQDyDhrjq6GZslYGY+mXWdp2CLI4Kps7vcFx",
            "HKxhaYi0ag==",
        ].joined()
    )!

    static func save(label: String) -> OSStatus {
        guard let certificate = SecCertificateCreateWithData(kCFAllocatorDefault, pinnedDER as CFData) else {
            return errSecParam
        }
        let query: [String: Any] = [
            kSecClass as String: kSecClassCertificate,
            kSecValueRef as String: certificate,
            kSecAttrLabel as String: label,
        ]
        return SecItemAdd(query as CFDictionary, nil)
    }

    static func load(label: String) -> SecCertificate? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassCertificate,
            kSecAttrLabel as String: label,
            kSecReturnRef as String: kCFBooleanTrue!,
        ]
        var item: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess else { return nil }
        return (item as! SecCertificate)
    }

    /// The pinned public key, as OpenSSL exports it (the last 65 bytes of its DER: X9.63).
    static let pinnedKey = Data(
        base64Encoded: "BLamLRi+3XIKKBECr0JOcFaU+P5HX+/OiYBGWd1LqqKyFsrd0fH0OcEwVTJtQJt2qmOnZ4UFkWl2LZxcCaaeFBg=")!

    static func matchesKeyPin(_ certificate: SecCertificate) -> Bool {
        guard let key = SecCertificateCopyKey(certificate) else { return false }
        var error: Unmanaged<CFError>?
        guard let bits = SecKeyCopyExternalRepresentation(key, &error) as Data? else { return false }
        return bits == pinnedKey
    }

    static func matchesPin(_ certificate: SecCertificate) -> Bool {
        let data = SecCertificateCopyData(certificate) as Data
        return data == pinnedDER
    }

    static func remove(_ certificate: SecCertificate) -> OSStatus {
        SecItemDelete([kSecClass as String: kSecClassCertificate, kSecValueRef as String: certificate] as CFDictionary)
    }
}
