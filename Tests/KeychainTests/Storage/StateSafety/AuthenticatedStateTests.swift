import Crypto
import Foundation
import Keychain
import KeychainSupport
import Testing

@testable import Enclave

/// Every field of the Enclave's state is authenticated with a device-derived key and refused
/// with errSecDecode when altered; the KDF parameters are bounded and computed with checked
/// arithmetic; a damaged biometry file does not stand in the way of the passcode (issue:
/// "Authenticate all of the Enclave's state").
@Suite struct AuthenticatedStateTests {
    /// Rewrites a field of the state file `name` as an attacker would: the payload changes, the
    /// authentication code stays.
    func tamper(_ keychain: TestKeychain, _ name: String, _ edit: (inout [String: Any]) -> Void) throws {
        let url = keychain.directory.appendingPathComponent(name)
        var envelope = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let encoded = try #require(envelope["payload"] as? String)
        let payload = try #require(Data(base64Encoded: encoded))
        var fields = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let original = NSDictionary(dictionary: fields)
        edit(&fields)
        // An edit that leaves every value as it was may re-encode to the very bytes the MAC covers.
        try #require(!original.isEqual(to: fields), "the edit of \(name) changed nothing")
        envelope["payload"] = try JSONSerialization.data(withJSONObject: fields).base64EncodedString()
        try JSONSerialization.data(withJSONObject: envelope).write(to: url)
    }

    func withPasscode() throws -> TestKeychain {
        let keychain = try TestKeychain.make()
        try keychain.setPasscode("1234")
        return keychain
    }

    func deviceKey(_ keychain: TestKeychain) throws -> SymmetricKey {
        SymmetricKey(data: try Data(contentsOf: keychain.directory.appendingPathComponent("device-secret")))
    }

    @Test(arguments: ["logN", "erase", "keychainID", "wraps", "version"])
    func anAlteredKeybagFieldIsRefused(_ field: String) throws {
        let keychain = try withPasscode()
        defer { keychain.remove() }
        try tamper(keychain, "keybag") { fields in
            switch field {
            case "logN":
                var passcode = fields["passcode"] as? [String: Any] ?? [:]
                passcode["logN"] = 1
                fields["passcode"] = passcode
            case "erase": fields["eraseAfterFailedAttempts"] = true
            case "keychainID": fields["keychainID"] = UUID().uuidString
            case "wraps":
                var wraps = fields["wrappedClassKeys"] as? [Any] ?? []
                if wraps.count >= 4 { wraps.swapAt(1, 3) }
                fields["wrappedClassKeys"] = wraps
            default: fields["databaseCreated"] = false
            }
        }
        #expect(throws: KeychainError.errSecDecode) { try keychain.restarted() }
        #expect(throws: KeychainError.errSecDecode) { try keychain.unlock("1234") }
    }

    @Test func aFormatOneKeybagIsRefused() throws {
        // Development builds before 2026-11 wrote the keybag as plain JSON, unauthenticated.
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let formatOne =
            #"{"eraseAfterFailedAttempts":false,"keychainID":"0E0B1D2C-0000-4000-8000-000000000000","#
            + #""version":1,"wrappedClassKeys":[]}"#
        try Data(formatOne.utf8).write(to: keychain.directory.appendingPathComponent("keybag"))
        do {
            _ = try keychain.restarted()
            Issue.record("a format-1 keybag was accepted")
        } catch let error as KeychainError {
            #expect(error.status == errSecDecode)
            #expect(error.message.contains("swift-keychain keybag v2"), "\(error.message)")
        }
    }

    @Test(arguments: [1, 9, 62, 1 << 40])
    func weakOrAbsurdKDFParametersAreRefusedBeforeAnyAttemptIsCounted(_ logN: Int) throws {
        // Even a keybag carrying a valid authentication code (a bug, or a future writer) may not
        // ask for less than the floor (here the tests' floor, 2^10), or for more memory than the
        // ceiling; 2^62 overflowed and crashed, and each crash counted as a failed attempt.
        let keychain = try withPasscode()
        defer { keychain.remove() }
        let files = try KeychainDirectory(keychain.directory, creating: false)
        let key = try deviceKey(keychain)
        var keybag = try #require(try Keybag.load(files, deviceKey: key, limits: TestKeychain.fastLimits))
        keybag.passcode?.logN = logN
        try files.writeAtomically(
            AuthenticatedState.encode(keybag, name: Keybag.fileName, version: Keybag.version, deviceKey: key),
            to: Keybag.fileName)
        let attempts = try Data(contentsOf: keychain.directory.appendingPathComponent("attempts"))
        #expect(throws: KeychainError.errSecDecode) { try keychain.restarted() }
        #expect(throws: KeychainError.errSecDecode) { try keychain.unlock("1234") }
        #expect(
            try Data(contentsOf: keychain.directory.appendingPathComponent("attempts")) == attempts,
            "no attempt was counted")
    }

    /// The database-state record's format, written here from its definition (slot: generation,
    /// identity length, identity, HMAC-SHA256 under the file's device-derived key over the
    /// label and those bytes, zeros to 128): a keychain written before the HMAC was keyed once
    /// per Enclave still opens, and a slot whose code is off by one bit is not believed.
    @Test func theDatabaseRecordReadsAsItsFormatDefinesIt() throws {
        let keychain = try TestKeychain.make()
        defer { keychain.remove() }
        let files = try KeychainDirectory(keychain.directory, creating: false)
        let deviceKey = try deviceKey(keychain)
        func slot(_ generation: UInt64, _ id: String, flippingCodeBit: Bool = false) -> Data {
            var body = Data()
            withUnsafeBytes(of: generation.bigEndian) { body.append(contentsOf: $0) }
            body.append(UInt8(id.utf8.count))
            body.append(contentsOf: id.utf8)
            var code = Data(
                HMAC<SHA256>.authenticationCode(
                    for: Data("swift-keychain database-state v1".utf8) + body,
                    using: AuthenticatedState.key(for: "database-state", deviceKey: deviceKey)))
            if flippingCodeBit { code[0] ^= 1 }
            return body + code + Data(count: 128 - body.count - code.count)
        }
        let authenticator = DatabaseRecord.Authenticator(deviceKey: deviceKey)
        try files.writeInPlace(
            slot(8, "keychain-a") + slot(7, "keychain-a"), at: 0, to: DatabaseRecord.fileName, durable: false)
        #expect(
            try DatabaseRecord.load(files, authenticator: authenticator)
                == DatabaseRecord(keychainID: "keychain-a", generation: 8))
        try files.writeInPlace(
            slot(8, "keychain-a", flippingCodeBit: true) + slot(7, "keychain-a"), at: 0, to: DatabaseRecord.fileName,
            durable: false)
        #expect(
            try DatabaseRecord.load(files, authenticator: authenticator)
                == DatabaseRecord(keychainID: "keychain-a", generation: 7))
        try files.writeInPlace(
            slot(8, "keychain-a", flippingCodeBit: true) + slot(7, "keychain-a", flippingCodeBit: true), at: 0,
            to: DatabaseRecord.fileName, durable: false)
        #expect(throws: KeychainError.errSecDecode) { try DatabaseRecord.load(files, authenticator: authenticator) }
    }

    @Test func theStandardFloorHoldsWhateverTheCalibrationMeasures() throws {
        let fastest = PasscodeKDF.calibrated(target: 1e-9)
        #expect(fastest.logN == 15 && fastest.blockSize == 8)
        try fastest.validate(.standard)
        #expect(throws: KeychainError.errSecDecode) { try PasscodeKDF(logN: 14, blockSize: 8).validate(.standard) }
        #expect(throws: KeychainError.errSecDecode) { try PasscodeKDF(logN: 15, blockSize: 7).validate(.standard) }
        #expect(throws: KeychainError.errSecDecode) { try PasscodeKDF(logN: 20, blockSize: 64).validate(.standard) }
        #expect(PasscodeKDF.memory(logN: 62, blockSize: 8, parallelism: 1) == nil)
    }

    @Test func anAlteredOrRemovedAttemptCounterIsNotBelievedAndBuysNoGuesses() throws {
        for damage in ["edit", "remove", "swap"] {
            let keychain = try withPasscode()
            defer { keychain.remove() }
            for wrong in ["0000", "1111", "2222"] {
                #expect(throws: KeychainError.errSecAuthFailed) { try keychain.unlock(wrong) }
            }
            switch damage {
            case "edit": try tamper(keychain, "attempts") { $0["failed"] = 0 }
            case "remove": try FileManager.default.removeItem(at: keychain.directory.appendingPathComponent("attempts"))
            default:
                // Another state file copied over the counter: each file has its own key.
                try FileManager.default.removeItem(at: keychain.directory.appendingPathComponent("attempts"))
                try FileManager.default.copyItem(
                    at: keychain.directory.appendingPathComponent("keybag"),
                    to: keychain.directory.appendingPathComponent("attempts"))
            }
            let restarted = try keychain.restarted()
            #expect(throws: KeychainError.errSecDecode, "\(damage)") { try restarted.unlock("1234") }
            let status = try restarted.status()
            #expect(status.failedAttempts == 9, "\(damage)")
            #expect(status.secondsUntilNextAttempt > 3500, "\(damage)")
            #expect(throws: KeychainError.errSecInteractionNotAllowed, "\(damage)") { try restarted.unlock("1234") }
            keychain.clock.advance(3601)
            try restarted.unlock("1234")
            #expect(try restarted.status().failedAttempts == 0)
        }
    }

    @Test func aDamagedBiometryFileLeavesStatusAndThePasscodeWorking() throws {
        let keychain = try withPasscode()
        defer { keychain.remove() }
        _ = try keychain.perform(.setSimulatedSensor(true, passcode: SecretBytes(utf8: "1234")))
        _ = try keychain.perform(.setSimulatedSensor(false, passcode: SecretBytes(utf8: "1234")))
        // Turning the simulated sensor on without the passcode, by editing the file.
        try tamper(keychain, "biometry") { $0["simulatorEnabled"] = true }
        let restarted = try keychain.restarted()
        #expect(try restarted.status().passcodeSet)
        try restarted.unlock("1234")
        #expect(try restarted.status().isUnlocked)
        do {
            _ = try restarted.perform(.biometryStatus)
            Issue.record("biometry reported available on an altered state")
        } catch {
            #expect(error.status == errSecDecode)
            #expect(error.message.contains("biometry is unavailable"), "\(error.message)")
        }
    }
}
