import Biometrics
import Enclave
import Foundation
import KeychainProtocol
import KeychainStore
import KeychainSupport

extension KeychainServer {
    /// The answer to `request` while no keychain exists yet: what an empty keychain without a
    /// passcode answers, so that looking (`keychainctl status`, a search, a preflight) never
    /// creates one as a side effect.
    ///
    /// The requests that create the keychain (``RequestFacts/createsKeychain``: adding an item
    /// or an Enclave key, setting a passcode, the sensor and enrollment requests) never come
    /// here, as ``OnDemandKeychain`` creates the keychain for them; should one come, it is
    /// refused with `errSecInternalComponent`. The biometry status names `fingerprintUser`'s
    /// enrolled fingers.
    public static func replyWithoutKeychain(
        _ request: KeychainRequest, fingerprintUser: String = FprintdSensor.currentUser()
    ) throws(KeychainError) -> KeychainReply {
        switch request {
        case .add, .setPasscode, .awaitBiometricMatch, .enrollFinger, .removeFinger, .setSimulatedSensor,
            .simulateTouch, .createEnclaveKey, .beginRestore, .restoreChunk, .finishRestore, .sync:
            throw KeychainError(.errSecInternalComponent, "a request that creates the keychain was sent without one")
        case .useEnclaveKey:
            throw KeychainError(.errSecDecode, "no keychain exists yet, so no key is this keychain's Enclave's")
        case .copyMatching, .update, .delete, .readOtherAppSecretItem, .allowOtherAppSecretItem:
            throw KeychainError(.errSecItemNotFound, "no keychain exists yet, so no item matches")
        case .searchSecretItems, .searchSecretItemsWithContentTypes:
            return .secretItemMatches([])
        case .deviceStatus:
            return .status(
                DeviceStatus(
                    passcodeSet: false, unlockedClasses: [.whenUnlocked, .afterFirstUnlock], failedAttempts: 0,
                    secondsUntilNextAttempt: 0,
                    eraseAfterFailedAttempts: false))
        case .lock, .unlock, .unlockByBiometry, .endBiometricMatch, .invalidateContext:
            return .done
        case .verifyPasscode:
            throw KeychainError(.errSecNotAvailable, "no device passcode is set")
        case .authenticateOwner(let authentication)
        where authentication.factors == .biometry && FprintdSensor.detect(user: fingerprintUser) == nil:
            // As `canEvaluatePolicy` answers: no sensor comes first (OwnerAuthenticationRun.refusal).
            return .authenticationFailed(.biometryNotAvailable, message: "no fingerprint sensor is available")
        case .authenticateOwner, .openOwnerSessionBySheet:
            return .authenticationFailed(.passcodeNotSet, message: "no device passcode is set")
        case .removePasscode, .setEraseAfterFailedAttempts:
            throw KeychainError(.errSecParam, "no passcode is set")
        case .erase, .countItems:
            return .count(0)
        case .daemonStatus, .identify, .servePrompts, .actForProcess, .watchChanges, .openLoginSession,
            .closeLoginSession:
            throw noDaemon
        case .beginImport, .importChunk, .finishImport:
            throw onlySystemDaemonImports
        case .openOwnerSession, .openOwnerSessionByBiometry, .setEntitlement, .declareApp:
            throw KeychainError(
                .errSecNotAvailable, "no device passcode is set: set one first (`keychainctl passcode set`)")
        case .closeOwnerSession:
            return .done
        case .listEntitlements:
            return .entitlements([:])
        case .listDeclaredApps:
            return .declaredApps([:])
        case .eraseUnopenableKeychain:
            throw KeychainError(.errSecItemNotFound, "no keychain exists here, so there is nothing to erase")
        case .keychainProtection:
            return .keychainProtection(KeychainProtection(sealedBy: nil, counterIndex: nil, counterValue: nil))
        case .beginBackup, .continueBackup:
            throw KeychainError(.errSecNoSuchKeychain, "no keychain exists here yet, so there is nothing to back up")
        case .biometryStatus, .unlockBySheet:
            // An unlock: without a passcode nothing is locked, so it asks nothing (as `unlock`).
            let fprintd = FprintdSensor.detect(user: fingerprintUser)
            return .biometry(
                BiometryStatus(
                    sensor: fprintd?.kind ?? .none, enrolledFingers: (try? fprintd?.enrolledFingers()) ?? [],
                    isLockedOut: false,
                    passcodeRequired: true, consecutiveFailures: 0, domainState: nil, passcodeSet: false))
        }
    }
}

extension KeychainServer {
    /// Removes the files of the keychain in `directory` that cannot be opened, under the
    /// Enclave's lock: the keybag first (so no item can be decrypted from here on), then the
    /// database and every other state file. The directory's own checks still apply, so a
    /// keychain planted by another user is never touched. `tpm`, the TPM this process has, tells
    /// whether a sealed device secret still opens here (``Enclave/removeFiles(in:also:tpm:lockTimeout:)``).
    /// Returns how many items the database held, when it could tell.
    public static func eraseFiles(in directory: URL, tpm: TrustedPlatformModule? = nil) throws(KeychainError) -> Int? {
        let count = try? KeychainStore.inspect(directory.appendingPathComponent(KeychainPaths.databaseFileName))?
            .itemCount
        try Enclave.removeFiles(
            in: directory, also: ["", "-wal", "-shm"].map { KeychainPaths.databaseFileName + $0 }, tpm: tpm)
        return count
    }
}
