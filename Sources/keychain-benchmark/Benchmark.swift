import Enclave
import Foundation
import Keychain
import KeychainServer

/// Measures the passcode KDF, the latency of `SecItemAdd` and `SecItemCopyMatching` on a
/// 1,000-item keychain in process against plain SQLite in the same run, and the time from a
/// touch to the `evaluatePolicy` reply, and keychaind's round trip and write throughput against
/// the embedded keychain. Run it in release (keychaind is started from beside it):
///
///     swift build -c release && .build/release/keychain-benchmark [items]
///
/// `keychain-benchmark ledger [items…]` measures the row ledger's check at open alone
/// (``LedgerCheck``), at 1,000 and 100,000 items by default.
@main
struct Benchmark {
    static func main() throws {
        let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1000
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-benchmark-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if CommandLine.arguments.dropFirst().first == "ledger" {
            let counts = CommandLine.arguments.dropFirst(2).compactMap(Int.init)
            try LedgerCheck.run(counts: counts.isEmpty ? [1000, 100_000] : counts, scratch: scratch)
            return
        }
        #if DEBUG
        print("warning: a debug build; run `swift run -c release keychain-benchmark` for figures worth quoting")
        #endif

        // 1. The passcode KDF, as calibrated on this machine.
        let parameters = PasscodeKDF.calibrated()
        var kdf = Timings()
        let kdfKeychain = EmbeddedTransport(directory: scratch.appendingPathComponent("kdf"), accessGroups: ["bench"], sharedUnlock: false)
        KeychainServices.transport = kdfKeychain
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        for _ in 0..<15 {
            // One unlock is one KDF run plus microseconds of unwrapping.
            try kdf.measure { try KeychainDevice.unlock(passcode: SecretBytes(utf8: "correct horse")) }
        }
        print("passcode KDF: scrypt N=2^\(parameters.logN) r=\(parameters.blockSize) p=\(parameters.parallelism); unlock median \(format(kdf.median)) (p90 \(format(kdf.percentile(0.9))), n=\(kdf.samples.count)); Apple's published target: about 80 ms")

        // 1b. The floor a keybag may not go below (PasscodeKDF.Limits.standard): the least an
        // offline guess costs on this machine, whatever the calibration chose.
        let floorServer = try KeychainServer(
            directory: scratch.appendingPathComponent("floor"), cache: ProcessClassKeyCache(),
            passcodeKDF: { PasscodeKDF(logN: PasscodeKDF.Limits.standard.minimumLogN, blockSize: PasscodeKDF.Limits.standard.minimumBlockSize) })
        KeychainServices.transport = EmbeddedTransport(server: floorServer, caller: CallerIdentity(accessGroups: ["bench"]))
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        var floor = Timings()
        for _ in 0..<15 { try floor.measure { try KeychainDevice.unlock(passcode: SecretBytes(utf8: "correct horse")) } }
        print("passcode KDF floor: scrypt N=2^\(PasscodeKDF.Limits.standard.minimumLogN) r=\(PasscodeKDF.Limits.standard.minimumBlockSize); one guess median \(format(floor.median)) (n=\(floor.samples.count))")

        // 2. Items: the public API on a keychain with a passcode set and unlocked.
        KeychainServices.transport = EmbeddedTransport(directory: scratch.appendingPathComponent("items"), accessGroups: ["bench"], sharedUnlock: false)
        try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: "correct horse"))
        let baseline = try PlainSQLiteBaseline(path: scratch.appendingPathComponent("plain.db").path)
        var (add, find, plainAdd, plainFind) = (Timings(), Timings(), Timings(), Timings())
        for i in 0..<count {
            let secret = Data("secret-\(i)".utf8)
            let attributes: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench",
                kSecAttrAccount as String: "account-\(i)", kSecValueData as String: secret,
            ]
            add.measure { precondition(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess) }
            try plainAdd.measure { try baseline.add(service: "bench", account: "account-\(i)", secret: secret) }
        }
        for i in (0..<count).shuffled() {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench",
                kSecAttrAccount as String: "account-\(i)", kSecReturnData as String: true,
            ]
            var result: CFTypeRef?
            find.measure { precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess) }
            precondition(result as? Data == Data("secret-\(i)".utf8))
            try plainFind.measure {
                let found = try baseline.find(service: "bench", account: "account-\(i)")
                precondition(found != nil)
            }
        }
        func line(_ name: String, _ ours: Timings, _ peer: Timings) -> String {
            "\(name): median \(format(ours.median)) (p90 \(format(ours.percentile(0.9)))); plain SQLite \(format(peer.median)); ratio \(String(format: "%.1f", ours.median / peer.median))x"
        }
        print("items: \(count) generic passwords, passcode set and unlocked, one write transaction per add")
        print(line("SecItemAdd", add, plainAdd))
        print(line("SecItemCopyMatching (data)", find, plainFind))
        var (delete, plainDelete) = (Timings(), Timings())
        for i in (0..<min(count, 200)).shuffled() {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "bench", kSecAttrAccount as String: "account-\(i)",
            ]
            delete.measure { precondition(SecItemDelete(query as CFDictionary) == errSecSuccess) }
            try plainDelete.measure { try baseline.delete(service: "bench", account: "account-\(i)") }
        }
        print(line("SecItemDelete (gone from database and WAL on return)", delete, plainDelete))

        // 3. LocalAuthentication: from a touch to the reply.
        KeychainServices.transport = EmbeddedTransport(directory: scratch.appendingPathComponent("touch"), accessGroups: ["bench"], sharedUnlock: false)
        let touch = try touchToReply(rounds: 25)
        print("touch to evaluatePolicy reply (simulated sensor): median \(format(touch.median)) (p90 \(format(touch.percentile(0.9))), n=\(touch.samples.count))")
        let (protected, plain) = try protectedReads(rounds: 201)
        print(line("userPresence item read, authenticated context reused", protected, plain).replacingOccurrences(of: "plain SQLite", with: "same item without access control"))

        // 4. keychaind: the round trip, and durable adds with concurrent clients.
        try daemonFigures(scratch: scratch, rounds: 2000)
    }
}
