import Foundation
import Keychain
import Testing

/// Project Wycheproof's ECDSA vectors (Apache-2.0; `Vectors/README.md` says where they come
/// from): every valid signature verifies through `SecKeyVerifySignature` and every invalid one
/// (a BER encoding, a malleated or out-of-range r or s, a wrong point) is refused.
@Suite struct WycheproofTests {
    private struct File: Decodable {
        struct Group: Decodable {
            struct PublicKey: Decodable { let uncompressed: String }
            struct Case: Decodable {
                let tcId: Int
                let msg: String
                let sig: String
                let result: String
            }
            let publicKey: PublicKey
            let tests: [Case]
        }
        let testGroups: [Group]
    }

    /// One file of `Vectors/`, kept beside this test.
    private static func vectors(_ name: String) throws -> File {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/\(name)")
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: file))
    }

    private static func bytes(_ hex: String) -> Data {
        Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! })
    }

    @Test(arguments: [
        ("ecdsa_secp256r1_sha256_test.json", SecKeyAlgorithm.ecdsaSignatureMessageX962SHA256),
        ("ecdsa_secp256r1_sha512_test.json", .ecdsaSignatureMessageX962SHA512),
        ("ecdsa_secp384r1_sha384_test.json", .ecdsaSignatureMessageX962SHA384),
        ("ecdsa_secp521r1_sha512_test.json", .ecdsaSignatureMessageX962SHA512),
    ])
    func everyVectorVerifiesAsWycheproofSays(file: String, algorithm: SecKeyAlgorithm) throws {
        let vectors = try Self.vectors(file)
        var checked = 0
        for group in vectors.testGroups {
            let attributes =
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyClass: kSecAttrKeyClassPublic]
                as NSDictionary
            let key = try #require(
                SecKeyCreateWithData(Self.bytes(group.publicKey.uncompressed) as CFData, attributes, nil))
            for vector in group.tests where vector.result != "acceptable" {
                let verified = SecKeyVerifySignature(
                    key, algorithm, Self.bytes(vector.msg) as CFData, Self.bytes(vector.sig) as CFData, nil)
                #expect(verified == (vector.result == "valid"), "\(file) tcId \(vector.tcId)")
                checked += 1
            }
        }
        #expect(checked > 300)
    }
}
