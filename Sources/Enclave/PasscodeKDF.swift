import Crypto
import CryptoExtras
import Foundation
import KeychainProtocol

/// The passcode key derivation: scrypt over the passcode, then HKDF over the scrypt output and
/// the device secret ("tangling", as Apple tangles the passcode with the UID key). Without the
/// device secret no stored value lets anyone test a guess; with it, each guess costs one scrypt
/// run, calibrated to about 100 ms.
public struct PasscodeKDF: Sendable, Codable, Hashable {
    /// 16 random bytes, new for every passcode.
    public var salt: Data
    /// log2 of scrypt's cost parameter N.
    public var logN: Int
    /// scrypt's block size r.
    public var blockSize: Int
    /// scrypt's parallelism p.
    public var parallelism: Int

    /// Creates parameters with a fresh salt.
    public init(logN: Int, blockSize: Int, parallelism: Int = 1) {
        self.salt = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// Parameters measured on this machine so that one derivation takes about `target` seconds
    /// (100 ms by default, as DESIGN.md asks; Apple calibrates to about 80 ms). N is 2^15 and the
    /// block size r scales with the machine's speed; it never goes below scrypt's customary 8.
    /// The probe runs at the real N, three times, and takes the median: every derivation
    /// allocates fresh memory, so the page faults belong in the measurement.
    public static func calibrated(target: Double = 0.1) -> PasscodeKDF {
        let probe = PasscodeKDF(logN: 15, blockSize: 8)
        var samples: [Double] = []
        for _ in 0..<3 {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try? probe.scrypt(SecretBytes(utf8: "calibration"))
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        let seconds = samples.sorted()[1]
        // Work and memory are proportional to r.
        let blockSize = Int((8 * target / max(seconds, 1e-4)).rounded())
        return PasscodeKDF(logN: 15, blockSize: min(max(blockSize, 8), 64))
    }

    /// Derives the passcode key, tangled with the device secret.
    func deriveKey(passcode: SecretBytes, deviceKey: SymmetricKey, keychainID: String) throws(KeychainError) -> SymmetricKey {
        let stretched = try scrypt(passcode)
        var material = stretched.withUnsafeBytes { Data($0) }
        deviceKey.withUnsafeBytes { material.append(contentsOf: $0) }
        defer { material.resetBytes(in: 0..<material.count) }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), salt: Data(keychainID.utf8),
            info: Data("swift-keychain passcode v1".utf8), outputByteCount: 32)
    }

    private func scrypt(_ passcode: SecretBytes) throws(KeychainError) -> SymmetricKey {
        let rounds = 1 << logN
        do {
            return try passcode.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes, salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize,
                    parallelism: parallelism, maxMemory: 128 * rounds * blockSize * parallelism + (1 << 20))
            }
        } catch {
            throw KeychainError(.errSecInternalComponent, "the passcode key derivation failed (scrypt N=2^\(logN), r=\(blockSize)): \(error)")
        }
    }
}
