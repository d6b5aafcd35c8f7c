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

    /// What a keybag may ask for: a floor on the work of one guess and a ceiling on memory. The
    /// keybag is authenticated, so these guard against a bug or a future format rather than an
    /// edit; they are checked before any derivation and before an attempt is counted.
    public struct Limits: Sendable, Hashable {
        /// The least log2(N) accepted.
        public var minimumLogN: Int
        /// The least block size r accepted.
        public var minimumBlockSize: Int
        /// The most memory one derivation may take (128·N·r·p bytes).
        public var maximumMemory: Int

        /// Creates limits.
        public init(minimumLogN: Int, minimumBlockSize: Int, maximumMemory: Int) {
            self.minimumLogN = minimumLogN
            self.minimumBlockSize = minimumBlockSize
            self.maximumMemory = maximumMemory
        }

        /// The keychain's floor, whatever the calibration measures: scrypt N=2^15, r=8 (about
        /// 80–100 ms a guess on a 2-core machine of 2026), memory at most 256 MiB.
        public static let standard = Limits(minimumLogN: 15, minimumBlockSize: 8, maximumMemory: 256 << 20)
    }

    /// Checks the parameters against `limits` with checked arithmetic.
    ///
    /// - Throws: `errSecDecode` for parameters below the floor, above the memory ceiling, or
    ///   out of scrypt's range (a damaged or downgraded keybag).
    public func validate(_ limits: Limits) throws(KeychainError) {
        guard salt.count == 16, (limits.minimumLogN...24).contains(logN),
            (limits.minimumBlockSize...1024).contains(blockSize),
            (1...16).contains(parallelism),
            let memory = Self.memory(logN: logN, blockSize: blockSize, parallelism: parallelism),
            memory <= limits.maximumMemory
        else {
            throw KeychainError(
                .errSecDecode,
                "the keybag's passcode parameters (scrypt N=2^\(logN), r=\(blockSize), p=\(parallelism)) are "
                    + "outside the accepted range (N at least 2^\(limits.minimumLogN), r at least "
                    + "\(limits.minimumBlockSize), at most \(limits.maximumMemory >> 20) MiB); the keybag was altered"
            )
        }
    }

    /// 128·2^logN·r·p, or nil when it overflows.
    static func memory(logN: Int, blockSize: Int, parallelism: Int) -> Int? {
        guard (0..<40).contains(logN) else { return nil }
        let (a, o1) = (128 << logN).multipliedReportingOverflow(by: blockSize)
        let (b, o2) = a.multipliedReportingOverflow(by: parallelism)
        return o1 || o2 ? nil : b
    }

    /// Parameters measured on this machine so that one derivation takes about `target` seconds
    /// (100 ms by default, as DESIGN.md asks; Apple calibrates to about 80 ms). N is 2^15 and the
    /// block size r scales with the machine's speed; it never goes below the floor of
    /// ``Limits/standard`` (r = 8), however fast the machine.
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
    func deriveKey(
        passcode: SecretBytes, deviceKey: SymmetricKey, keychainID: String
    ) throws(KeychainError) -> SymmetricKey {
        let stretched = try scrypt(passcode)
        var material = stretched.withUnsafeBytes { Data($0) }
        deviceKey.withUnsafeBytes { material.append(contentsOf: $0) }
        defer { material.resetBytes(in: 0..<material.count) }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), salt: Data(keychainID.utf8),
            info: Data("swift-keychain passcode v1".utf8), outputByteCount: 32)
    }

    /// scrypt of `passcode` with these parameters, untangled: the backup password's stretch, and the
    /// first step of ``deriveKey(passcode:deviceKey:keychainID:)``.
    func scrypt(_ passcode: SecretBytes) throws(KeychainError) -> SymmetricKey {
        guard let memory = Self.memory(logN: logN, blockSize: blockSize, parallelism: parallelism), logN < 40 else {
            throw KeychainError(
                .errSecDecode, "the passcode parameters (scrypt N=2^\(logN), r=\(blockSize)) are out of range")
        }
        let rounds = 1 << logN
        do {
            return try passcode.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes, salt: salt, outputByteCount: 32, rounds: rounds, blockSize: blockSize,
                    parallelism: parallelism, maxMemory: memory + (1 << 20))
            }
        } catch {
            throw KeychainError(
                .errSecInternalComponent,
                "the passcode key derivation failed (scrypt N=2^\(logN), r=\(blockSize)): \(error)")
        }
    }
}
