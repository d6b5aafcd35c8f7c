// The idioms of iOS code that holds keys: a P-256 key generated into the keychain by tag, found
// again with kSecReturnRef, signing and ECIES with CFError out-parameters; a client identity
// imported from a PKCS #12 file and stored.
import Foundation
import Security

enum KeyAndIdentityCode {
    static let tag = "com.example.corpus.signing".data(using: .utf8)!

    static func generateSigningKey() -> (key: SecKey?, error: Error?) {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecAttrKeySizeInBits as String: 256,
            kSecPrivateKeyAttrs as String: [
                kSecAttrIsPermanent as String: true,
                kSecAttrApplicationTag as String: tag,
            ],
        ]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
            return (nil, error!.takeRetainedValue() as Error)
        }
        return (key, nil)
    }

    static func loadSigningKey() -> SecKey? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassKey,
            kSecAttrApplicationTag as String: tag,
            kSecAttrKeyType as String: kSecAttrKeyTypeEC,
            kSecReturnRef as String: true,
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess else { return nil }
        return (item as! SecKey)
    }

    static func signAndVerify(_ privateKey: SecKey) -> Bool {
        let algorithm: SecKeyAlgorithm = .ecdsaSignatureMessageX962SHA256
        guard SecKeyIsAlgorithmSupported(privateKey, .sign, algorithm), let publicKey = SecKeyCopyPublicKey(privateKey)
        else { return false }
        let message = "challenge".data(using: .utf8)!
        var error: Unmanaged<CFError>?
        guard let signature = SecKeyCreateSignature(privateKey, algorithm, message as CFData, &error) as Data? else {
            return false
        }
        return SecKeyVerifySignature(publicKey, algorithm, message as CFData, signature as CFData, &error)
    }

    static func encryptAndDecrypt(_ privateKey: SecKey) -> String? {
        let algorithm = SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM
        guard let publicKey = SecKeyCopyPublicKey(privateKey),
            SecKeyIsAlgorithmSupported(publicKey, .encrypt, algorithm)
        else { return nil }
        var error: Unmanaged<CFError>?
        guard
            let sealed = SecKeyCreateEncryptedData(
                publicKey, algorithm, "sealed note".data(using: .utf8)! as CFData, &error)
        else { return nil }
        guard let opened = SecKeyCreateDecryptedData(privateKey, algorithm, sealed, &error) as Data? else { return nil }
        return String(data: opened, encoding: .utf8)
    }

    static func deleteSigningKey() -> OSStatus {
        SecItemDelete([kSecClass: kSecClassKey, kSecAttrApplicationTag: tag] as CFDictionary)
    }

    /// A client identity (CN=corpus client, P-256) as `openssl pkcs12 -export -passout pass:corpus` writes it.
    static let clientP12 = Data(
        base64Encoded: [
            "MIIEZwIBAzCCBB0GCSqGSIb3DQEHAaCCBA4EggQKMIIEBjCCApIGCSqGSIb3DQEHBqCCAoMwggJ/AgEAMIICeAYJKoZIhvcN",
            "AQcBMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAix8PhasjpfKwICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQME",
            "ASoEEOZaIq1QXbNpnWi8OZMd6UuAggIQ/Gb2O8Xi7eMuhjSuHz0bRW8nRV3Zzi4PU2A24xCSHb36Yh6Y6IQ5oA8PgQmbOCOt",
            "43Xg4bmfg5LN6UYNJ0D4uIJVA3QxdZatYgOf3z1B2JhihQy3HVBym03fF2WzgenhAf92LWQEUv2c2sf8RVwRMj6DVvnXr4R6",
            "Ub9E/cUudbQ/ue+PxyoRLjZYUmhef6U/7N98luwPi5BRKvSatJsDgDWkCefkehe7wkj+gfL7wZT9bzcBnsA9AJUEmUAXnkmi",
            "Zoymg+xVAcWV+TZwVwdvbL8jvMWkrkvYPZ3Lrvzh8+zLM/8CLwi4JXEFS8ORGs8UpjFPjnw2mc98Yev4+RkisNY+4gdh2SLR",
            "lgWjKbS7P26WFFnObj2DlOTYouIyXuphBiMQnsYNML5Fz/u9MuZw2iuuYwX/qj1dRCWN230yGP+NkGJisa/fEZAqxddXVgUh",
            "oZpZGrJmpgLT+7yWwurkgJiqUF3lRTqlG3nfE79aqooKCU+R6bOrFaJYKcGmcr2Jd03fOY1RTZDjFqX1uT2Dv60cggJ66lcG",
            "g1cmUs3FbBaiE7g/jzqtbz3mWg3BKeEL9AHVXRNNpLuT4aYwIXhnArhrQs4U1IUYNWzbyFmPAD92spfHVmWhPCfGQLmNtJqp",
            "sB86/5VDzurP3wmaxgcEd0J4c00wwVb639O9oqf+ULnZ3RQdn8//KF3sCYxzNZD1MIIBbAYJKoZIhvcNAQcBoIIBXQSCAVkw",
            "ggFVMIIBUQYLKoZIhvcNAQwKAQKgge8wgewwVwYJKoZIhvcNAQUNMEowKQYJKoZIhvcNAQUMMBwECAyBqKcKJX8EAgIIADAM",
            "BggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQobyD8wgluVvnckYAWIM/IQSBkN04xexG+G51wuaCkmArDLU2yMm5hsA9nUby",
            "c2qWynvcmxcMFTTEPbF/JkV3ChbR9LpoS1SV4edQyY27eDIOLIMQWNe5p9vTto7ZbYQxcBKyqL5DselERMc4/mpHkAL5RaKc",
            "/lArihFKK9rIXMWjnty6y8mPLsl7c2S0bIwMvbR+FtttyVtxVKLQlnBhhzC6BzFQMCMGCSqGSIb3DQEJFTEWBBSzAv95A/3a",
            "wsBBXnEhrvRCxeqDczApBgkqhkiG9w0BCRQxHB4aAGMAbwByAHAAdQBzACAAYwBsAGkAZQBuAHQwQTAxMA0GCWCGSAFlAwQC",
            "AQUABCDGlwy/RWBSFhrUjI346DVP/fAVyTO6Vp7yNLOPRxWvSAQITWkkzoiKA80CAggA",
        ].joined()
    )!

    static func importClientIdentity(passphrase: String) -> (status: OSStatus, identity: SecIdentity?, label: String?) {
        let options = [kSecImportExportPassphrase as String: passphrase]
        var items: CFArray?
        let status = SecPKCS12Import(clientP12 as CFData, options as CFDictionary, &items)
        guard status == errSecSuccess, let array = items as? [[String: Any]], let first = array.first else {
            return (status, nil, nil)
        }
        let identity = first[kSecImportItemIdentity as String] as! SecIdentity
        return (status, identity, first[kSecImportItemLabel as String] as? String)
    }

    static func storeAndFind(_ identity: SecIdentity) -> (stored: OSStatus, subject: String?) {
        let stored = SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil)
        var result: AnyObject?
        let query: [String: Any] = [kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true]
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return (stored, nil) }
        var certificate: SecCertificate?
        SecIdentityCopyCertificate(result as! SecIdentity, &certificate)
        return (stored, certificate.flatMap { SecCertificateCopySubjectSummary($0) as String? })
    }
}
