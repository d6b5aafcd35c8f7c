import Biometrics
import Enclave
import Foundation
import Synchronization
import KeychainProtocol
import KeychainStore

/// SecItem semantics (uniqueness, queries, update and delete of every match, Apple's error
/// codes) on the sealed store and the Enclave, for one caller identity per request.
///
/// The server trusts nothing in a request beyond its types: every limit and rule is checked
/// here, so a daemon can hand it requests parsed from untrusted bytes. It never crashes on bad
/// input; everything becomes a ``KeychainError``.
public final class KeychainServer: Sendable {
    let enclave: Enclave
    let store: KeychainStore
    /// The fprintd sensor once detected; it keeps a verification running between waits.
    let fprintd = Mutex<FprintdSensor?>(nil)

    /// Serves `store` with the keys of `enclave`. Rows sealed under an erased keybag are
    /// deleted here.
    public init(enclave: Enclave, store: KeychainStore) throws(KeychainError) {
        self.enclave = enclave
        self.store = store
        try adoptKeychainIdentity()
    }

    /// Opens the keychain in `directory`: the Enclave's files and the database `keychain.db`.
    public convenience init(directory: URL, cache: any ClassKeyCache, clock: any EnclaveClock = SystemEnclaveClock(),
                            passcodeKDF: @escaping @Sendable () -> PasscodeKDF = { PasscodeKDF.calibrated() }) throws(KeychainError) {
        let enclave = try Enclave(directory: directory, clock: clock, cache: cache, passcodeKDF: passcodeKDF)
        let store = try KeychainStore(url: directory.appendingPathComponent("keychain.db"))
        try self.init(enclave: enclave, store: store)
    }

    /// Carries out one request for `caller`.
    public func handle(_ request: KeychainRequest, caller: CallerIdentity) throws(KeychainError) -> KeychainReply {
        switch request {
        case .add(let item):
            return .items(try add(item, caller: caller))
        case .copyMatching(let query):
            return .items(try copyMatching(query, caller: caller))
        case .update(let query, let changes):
            try update(query, changes, caller: caller)
            return .done
        case .delete(let query):
            try delete(query, caller: caller)
            return .done
        case .deviceStatus:
            return .status(try enclave.status())
        case .lock:
            try enclave.lock()
            return .done
        case .unlock(let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.unlock(passcode: passcode) }
            return .done
        case .setPasscode(let current, let new):
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.setPasscode(current: current, new: new) }
            return .done
        case .removePasscode(let current):
            try afterPasscodeCheck { () throws(KeychainError) in
                try enclave.removePasscode(current: current) { () throws(KeychainError) in
                    // Apple: "disabling the passcode causes all items in this class to be deleted".
                    _ = try store.write { try $0.deleteAll(accessibility: Accessibility.whenPasscodeSetThisDeviceOnly.rawValue) }
                }
            }
            return .done
        case .setEraseAfterFailedAttempts(let enabled, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.setEraseAfterFailedAttempts(enabled, passcode: passcode) }
            return .done
        case .verifyPasscode(let passcode):
            var grant: AuthenticationGrant?
            try afterPasscodeCheck { () throws(KeychainError) in grant = try enclave.verifyPasscode(passcode) }
            guard let grant else { throw KeychainError.errSecInternalComponent }
            return .granted(grant)
        case .biometryStatus:
            return .biometry(try biometryStatus())
        case .awaitBiometricMatch(let timeout):
            return .match(try awaitBiometricMatch(timeout: timeout))
        case .endBiometricMatch:
            try endBiometricMatch()
            return .done
        case .enrollFinger(let name, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in try enrollFinger(name, passcode: passcode) }
            return .done
        case .removeFinger(let name, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in try removeFinger(name, passcode: passcode) }
            return .done
        case .setSimulatedSensor(let enabled, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.setSimulatedSensor(enabled, passcode: passcode) }
            return .done
        case .simulateTouch(let matching, let finger):
            try simulateTouch(matching: matching, finger: finger)
            return .done
        }
    }

    /// Runs a passcode operation; whatever its outcome, deletes rows sealed under an erased
    /// keybag (a 10th failure with erase turned on replaces the keybag).
    private func afterPasscodeCheck(_ body: () throws(KeychainError) -> Void) throws(KeychainError) {
        do {
            try body()
        } catch {
            try? adoptKeychainIdentity()
            throw error
        }
    }

    private func adoptKeychainIdentity() throws(KeychainError) {
        let identity = try enclave.keychainID()
        try store.write { try $0.adopt(keychainID: identity) }
    }
}
