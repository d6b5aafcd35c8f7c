import Biometrics
import Enclave
import Foundation
import KeychainPrompt
import KeychainProtocol
import KeychainStore
import KeychainSupport
import KeychainSync
import Synchronization

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
    /// The user whose fingers fprintd verifies for this keychain: its owner's account.
    public let fingerprintUser: String
    /// What each authentication context earned; never sent to a client.
    let contexts = AuthenticationContexts()
    /// The owner authentications under way, which `invalidateContext` ends.
    let runningAuthentications = RunningAuthentications()
    /// The owner's entitlements list and app declarations as last read or written here: asked
    /// on every request of keychaind, so kept in memory (an edit of the file behind the server's
    /// back grants nothing; the file is authenticated when read).
    private let entitlements = Mutex<Entitlements?>(nil)
    /// The other apps' Secret Service items the owner let an app read "Only This Time", by the
    /// connection it asked on: forgotten when that connection closes.
    let itemGrantsForConnection = Mutex<[UInt64: Set<SecretServiceItemGrant>]>([:])
    /// The backups and restores under way, by connection.
    let transfers = BackupTransfers()
    /// One sync command at a time (Docs/Sync.md).
    let syncInProgress = Mutex(())
    /// Makes the transport to a sync remote, given its clone's directory: git.
    let syncTransports = Mutex<@Sendable (String, URL) -> any SyncTransport>(KeychainServer.gitTransport)
    /// False in the system daemon: a sync remote that is a path of this machine (or `file:`) is
    /// refused, since keychaind would read and write it as its own user, who can reach every
    /// user's keychain directory.
    public let localSyncRemotes: Bool

    /// Opens the keychain in `directory`: the Enclave's files, then the database
    /// `keychain.db`, admitted only when it belongs with the keybag
    /// (``Enclave/bindDatabase(inspect:stamp:)``). A database that does not is refused with
    /// `errSecDecode` and left byte for byte as it was.
    ///
    /// - Parameters:
    ///   - creating: create a new keychain when there is none; when false, a missing keychain
    ///     is `errSecNoSuchKeychain` and nothing is written.
    ///   - passcodeLimits, lockTimeout: see
    /// ``Enclave/init(directory:clock:cache:passcodeKDF:passcodeLimits:creating:lockTimeout:)``.
    ///   - fingerprintUser: the account whose fingers fprintd verifies: this process's user by
    ///     default; in the system daemon, the user the keychain belongs to.
    ///   - tpm: the TPM that seals the device secret and counts the database's generations; nil
    ///     keeps the secret in a file.
    ///   - localSyncRemotes: false refuses a sync remote that is a path of this machine.
    public init(
        directory: URL, cache: any ClassKeyCache, clock: any EnclaveClock = SystemEnclaveClock(),
        passcodeKDF: @escaping @Sendable () -> PasscodeKDF = { PasscodeKDF.calibrated() },
        passcodeLimits: PasscodeKDF.Limits = .standard, creating: Bool = true, lockTimeout: Double = 20,
        fingerprintUser: String = FprintdSensor.currentUser(), tpm: TrustedPlatformModule? = nil,
        localSyncRemotes: Bool = true
    ) throws(KeychainError) {
        self.localSyncRemotes = localSyncRemotes
        self.fingerprintUser = fingerprintUser
        let enclave = try Enclave(
            directory: directory, clock: clock, cache: cache, passcodeKDF: passcodeKDF, passcodeLimits: passcodeLimits,
            creating: creating, lockTimeout: lockTimeout, tpm: tpm)
        let url = directory.appendingPathComponent(KeychainPaths.databaseFileName)
        var opened: KeychainStore?
        try Self.bind(enclave, url, &opened)
        self.enclave = enclave
        if let opened {
            self.store = opened
        } else {
            self.store = try Self.openStore(enclave, url)
        }
    }

    private static func openStore(_ enclave: Enclave, _ url: URL) throws(KeychainError) -> KeychainStore {
        try KeychainStore(url: url, ledger: enclave) { generation in
            enclave.recordDatabaseCommit(generation: generation)
        }
    }

    /// Admits the database (opening `store` when a stamp needs it): see
    /// ``Enclave/bindDatabase(inspect:stamp:)``.
    private static func bind(_ enclave: Enclave, _ url: URL, _ store: inout KeychainStore?) throws(KeychainError) {
        try enclave.bindDatabase(inspect: { () throws(KeychainError) in try KeychainStore.inspect(url) }) {
            (keychainID, deletingRows) throws(KeychainError) in
            let opened: KeychainStore
            if let store { opened = store } else { opened = try openStore(enclave, url) }
            store = opened
            return try opened.stamp(keychainID: keychainID, deletingRows: deletingRows)
        }
    }

    /// Carries out one request for `caller`; an owner authentication draws its sheet through
    /// `prompts` (none: it fails with `notInteractive`).
    public func handle(
        _ request: KeychainRequest, caller: CallerIdentity, prompts: (any PromptProvider)? = nil
    ) throws(KeychainError) -> KeychainReply {
        switch request {
        case .add(let item):
            return .items(try enclave.inItemRequest { () throws(KeychainError) in try add(item, caller: caller) })
        case .copyMatching(let query):
            return .items(
                try enclave.inItemRequest { () throws(KeychainError) in try copyMatching(query, caller: caller) })
        case .update(let query, let changes):
            try enclave.inItemRequest { () throws(KeychainError) in try update(query, changes, caller: caller) }
            return .done
        case .delete(let query):
            return .count(try enclave.inItemRequest { () throws(KeychainError) in try delete(query, caller: caller) })
        case .deviceStatus:
            return .status(try enclave.status())
        case .lock:
            contexts.revokeAll()
            try enclave.lock()
            return .done
        case .unlock(let passcode):
            try unlock(passcode: passcode)
            return .done
        case .setPasscode(let current, let new):
            defer { contexts.revokeAll() }
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.setPasscode(current: current, new: new) }
            return .done
        case .removePasscode(let current):
            defer { contexts.revokeAll() }
            var deleted = 0
            try afterPasscodeCheck { () throws(KeychainError) in
                try enclave.removePasscode(current: current) { () throws(KeychainError) in
                    // Apple: "disabling the passcode causes all items in this class to be deleted".
                    deleted = try store.write(purging: true) {
                        try $0.deleteAll(accessibility: Accessibility.whenPasscodeSetThisDeviceOnly.rawValue)
                    }
                }
            }
            return .count(deleted)
        case .erase(let passcode):
            // The passcode is the owner's proof (the Enclave checks it when one is set). Without
            // a passcode nothing tells the owner from any program of theirs: any may erase.
            let count = try store.read { try $0.count() }
            try afterPasscodeCheck { () throws(KeychainError) in try enclave.erase(passcode: passcode) }
            removeSyncRepository()
            return .count(count)
        case .countItems(let accessibility):
            // A count reveals how many items there are, nothing of them: `passcode remove` and
            // `erase` say how many will go whoever asks.
            return .count(try store.read { try $0.count(accessibility: accessibility?.rawValue) })
        case .setEraseAfterFailedAttempts(let enabled, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in
                try enclave.setEraseAfterFailedAttempts(enabled, passcode: passcode)
            }
            return .done
        case .verifyPasscode(let passcode, let context):
            try verifyPasscode(passcode, context: context, caller: caller)
            return .done
        case .biometryStatus:
            return .biometry(try biometryStatus())
        case .awaitBiometricMatch(let timeout, let context):
            return .match(try awaitBiometricMatch(timeout: timeout, context: context, caller: caller))
        case .invalidateContext(let context):
            runningAuthentications.cancel(context)
            contexts.invalidate(context, caller: caller)
            return .done
        case .authenticateOwner(let authentication):
            return try authenticateOwner(authentication, for: .authorizeContext, caller: caller, prompts: prompts)
        case .unlockBySheet(let authentication):
            guard authentication.factors == .passcode else {
                throw KeychainError(.errSecParam, "only the passcode unlocks the keychain")
            }
            // Without a passcode nothing is locked: no sheet, as `unlock(passcode:)` succeeds.
            guard try enclave.status().passcodeSet else { return .biometry(try biometryStatus()) }
            return try authenticateOwner(authentication, for: .unlock, caller: caller, prompts: prompts)
        case .openOwnerSessionBySheet(let authentication):
            return try authenticateOwner(authentication, for: .proveOwner, caller: caller, prompts: prompts)
        case .searchSecretItems(let attributes), .searchSecretItemsWithContentTypes(let attributes):
            return .secretItemMatches(
                try enclave.inItemRequest { () throws(KeychainError) in
                    try searchSecretItems(
                        attributes, caller: caller,
                        withContentTypes: request.kind == .searchSecretItemsWithContentTypes)
                }
            )
        case .readOtherAppSecretItem(let service, let account):
            let item = try enclave.inItemRequest { () throws(KeychainError) in
                try readOtherAppSecretItem(service: service, account: account, caller: caller)
            }
            return .items([item])
        case .allowOtherAppSecretItem(let service, let account, let authentication):
            return try allowOtherAppSecretItem(
                service: service, account: account, authentication, caller: caller, prompts: prompts)
        case .unlockByBiometry(let timeout):
            return try unlockByTouch(timeout: timeout)
        case .endBiometricMatch:
            try endBiometricMatch()
            return .done
        case .enrollFinger(let name, let passcode):
            defer { contexts.revokeAll() }
            try afterPasscodeCheck { () throws(KeychainError) in try enrollFinger(name, passcode: passcode) }
            return .done
        case .removeFinger(let name, let passcode):
            defer { contexts.revokeAll() }
            try afterPasscodeCheck { () throws(KeychainError) in try removeFinger(name, passcode: passcode) }
            return .done
        case .setSimulatedSensor(let enabled, let passcode):
            try afterPasscodeCheck { () throws(KeychainError) in
                try enclave.changeSimulatedSensor(.setEnabled(enabled), passcode: passcode)
            }
            return .done
        case .simulateTouch(let matching, let finger):
            try simulateTouch(matching: matching, finger: finger)
            return .done
        case .daemonStatus, .identify, .servePrompts, .actForProcess, .watchChanges, .openLoginSession,
            .closeLoginSession:
            throw Self.noDaemon
        case .beginImport, .importChunk, .finishImport:
            throw Self.onlySystemDaemonImports
        case .openOwnerSession(let passcode):
            // In this process the program states its own powers; only keychaind keeps sessions.
            // The owner's passcode unlocks as well, as `unlock` does.
            try unlock(passcode: passcode)
            return .done
        case .openOwnerSessionByBiometry(let timeout):
            return .match(try ownerMatch(timeout: timeout, caller: caller))
        case .closeOwnerSession:
            return .done
        case .setEntitlement(let app, let group, let granted):
            try requireOwner(caller)
            try RequestValidation.checkEntitlement(app: app, group: group)
            try enclave.changeEntitlements(.grant(app: app, group: group, granted: granted))
            forgetEntitlements()
            return .done
        case .listEntitlements:
            try requireOwner(caller)
            return .entitlements(try currentEntitlements().groups)
        case .declareApp(let app, let declaration):
            try requireOwner(caller)
            try RequestValidation.checkDeclaration(app: app, declaration)
            try enclave.changeEntitlements(.declare(app: app, declaration))
            forgetEntitlements()
            return .done
        case .listDeclaredApps:
            try requireOwner(caller)
            return .declaredApps(try currentEntitlements().declarations)
        case .createEnclaveKey(let accessibility, let accessControl):
            if let accessControl, accessControl.protection != accessibility {
                throw KeychainError(.errSecParam, "an Enclave key's accessibility is its access control's protection")
            }
            let stored = try accessControl.map { (control: AccessControl) throws(KeychainError) in
                try self.stored(control)
            }
            let key = try enclave.inItemRequest { () throws(KeychainError) in
                try enclave.makeEnclaveKey(
                    accessibility: accessibility, accessControl: stored, accessGroup: caller.defaultAccessGroup)
            }
            return .enclaveKey(sealedKey: key.sealedKey, publicKey: key.publicKey)
        case .useEnclaveKey(let use):
            let grants = contexts.grants(use.authenticationContext, caller: caller)
            return .keyOutput(
                try enclave.inItemRequest { () throws(KeychainError) in
                    try enclave.useEnclaveKey(
                        use.sealedKey, use.operation, callerGroups: caller.actsForOwner ? nil : caller.accessGroups,
                        grants: grants)
                })
        case .beginBackup(let password):
            return .backupPart(try beginBackup(password: password, caller: caller))
        case .continueBackup:
            return .backupPart(try continueBackup(caller: caller))
        case .beginRestore(let password, let replacing):
            try beginRestore(password: password, replacing: replacing, caller: caller)
            return .done
        case .restoreChunk(let bytes):
            return .count(try restoreChunk(bytes, caller: caller))
        case .finishRestore:
            return .restored(try finishRestore(caller: caller))
        case .keychainProtection:
            return .keychainProtection(enclave.deviceSecretProtection())
        case .sync(let command):
            return .sync(try sync(command, caller: caller))
        case .eraseUnopenableKeychain:
            // An open keychain is erased with its passcode; OnDemandKeychain handles the rest.
            _ = try enclave.status()
            throw KeychainError(
                .errSecParam, "the keychain opens: erase it with `keychainctl erase` (its passcode when one is set)")
        }
    }

    /// The answer to `daemonStatus` from a keychain in this process.
    static let noDaemon = KeychainError(
        .errSecUnimplemented, "this program uses the keychain embedded in it, not keychaind")
    /// The answer to an import anywhere but in the system daemon.
    static let onlySystemDaemonImports = KeychainError(
        .errSecUnimplemented, "only the system keychain daemon (keychaind --system) takes in a per-user keychain")

    /// The access groups of `app`, the default first (``Entitlements/accessGroups(forApp:)``):
    /// its declared groups or its own (its identity), then the shared ones the owner granted it.
    /// A damaged entitlements file grants and declares nothing (the error shows in `apps list`).
    public func accessGroups(forApp app: String) -> [String] {
        (try? currentEntitlements())?.accessGroups(forApp: app) ?? [app]
    }

    func currentEntitlements() throws(KeychainError) -> Entitlements {
        if let known = entitlements.withLock({ $0 }) { return known }
        let loaded = try enclave.entitlements()
        entitlements.withLock { $0 = loaded }
        return loaded
    }

    /// Drops the entitlements read last: the next request reads the file again.
    func forgetEntitlements() {
        entitlements.withLock { $0 = nil }
    }

    /// Forgets what the authentication contexts of a closed connection earned.
    public func endConnection(_ connection: UInt64) {
        contexts.endConnection(connection)
        itemGrantsForConnection.withLock { _ = $0.removeValue(forKey: connection) }
        transfers.end(connection)
    }

    /// Runs a passcode operation; whatever its outcome, finishes an erase it caused (a 10th
    /// failure with erase turned on, or an erase on request, replaces the keybag; the rows of
    /// the erased keychain go here).
    /// Checks the passcode for an authentication of `context` and files the grant under it.
    /// Runs an owner authentication for `purpose` with the sheets of `prompts` (none: it fails
    /// with `notInteractive`). Only an app's own evaluation files what it earns under the
    /// request's context: the others run under a context of their own, forgotten at the end.
    func authenticateOwner(
        _ authentication: OwnerAuthentication, for purpose: OwnerAuthenticationRun.Purpose, caller: CallerIdentity,
        prompts: (any PromptProvider)?
    ) throws(KeychainError) -> KeychainReply {
        var authentication = authentication
        if purpose != .authorizeContext { authentication.context = .random() }
        defer { if purpose != .authorizeContext { contexts.invalidate(authentication.context, caller: caller) } }
        let run = OwnerAuthenticationRun(
            server: self, authentication: authentication, purpose: purpose, caller: caller,
            prompts: prompts ?? NoPrompts())
        switch try run.run() {
        case .succeeded(let status): return .biometry(status)
        case .failed(let failure, let message): return .authenticationFailed(failure, message: message)
        }
    }

    /// Unlocks the keychain with `passcode`, counted as every passcode check is.
    func unlock(passcode: SecretBytes) throws(KeychainError) {
        try afterPasscodeCheck { () throws(KeychainError) in try enclave.unlock(passcode: passcode) }
    }

    func verifyPasscode(
        _ passcode: SecretBytes, context: AuthenticationContextID, caller: CallerIdentity
    ) throws(KeychainError) {
        var grant: AuthenticationGrant?
        try afterPasscodeCheck { () throws(KeychainError) in grant = try enclave.verifyPasscode(passcode) }
        guard let grant else { throw KeychainError.errSecInternalComponent }
        contexts.record(grant, context: context, caller: caller)
    }

    private func afterPasscodeCheck(_ body: () throws(KeychainError) -> Void) throws(KeychainError) {
        do {
            try body()
        } catch {
            try? finishPendingErase()
            throw error
        }
        try finishPendingErase()
    }

    private func finishPendingErase() throws(KeychainError) {
        var opened: KeychainStore? = store
        try Self.bind(enclave, store.url, &opened)
    }

    private static let ownerOnly = KeychainError(
        .errSecMissingEntitlement,
        "only the device owner may do this: open an owner session first (`keychainctl owner login`, with the passcode)")

    func requireOwner(_ caller: CallerIdentity) throws(KeychainError) {
        guard caller.actsForOwner else { throw Self.ownerOnly }
    }
}
