/// Every request's facts, in one place: its wire tag, who answers it, whether it creates a
/// keychain, what it does to owner sessions and what the audit log says of it.
///
/// A new request is a case of ``KeychainRequest``, a case here with the next tag and its row in
/// ``facts``, its fields in ``RequestCoder``, and its handler; the compiler names each switch
/// that lacks it. A tag is assigned once: it never changes and is never reused, so that a
/// client and a daemon built apart agree on what every tag means.
public enum RequestKind: UInt8, CaseIterable, Sendable {
    case add = 1
    case copyMatching = 2
    case update = 3
    case delete = 4
    case deviceStatus = 5
    case lock = 6
    case unlock = 7
    case setPasscode = 8
    case removePasscode = 9
    case erase = 10
    case countItems = 11
    case setEraseAfterFailedAttempts = 12
    case verifyPasscode = 13
    case biometryStatus = 14
    case awaitBiometricMatch = 15
    case endBiometricMatch = 16
    case invalidateContext = 17
    case enrollFinger = 18
    case removeFinger = 19
    case setSimulatedSensor = 20
    case simulateTouch = 21
    case daemonStatus = 22
    case openOwnerSession = 23
    case closeOwnerSession = 24
    case setEntitlement = 25
    case listEntitlements = 26
    case eraseUnopenableKeychain = 27
    case openOwnerSessionByBiometry = 28
    case identify = 29
    case beginImport = 30
    case importChunk = 31
    case finishImport = 32
    case declareApp = 33
    case listDeclaredApps = 34
    case createEnclaveKey = 35
    case useEnclaveKey = 36
    case authenticateOwner = 37
    case servePrompts = 38
    case unlockBySheet = 39
    case openOwnerSessionBySheet = 40
    case actForProcess = 41
    case searchSecretItems = 42
    case readOtherAppSecretItem = 43
    case allowOtherAppSecretItem = 44
    case unlockByBiometry = 45
    case openLoginSession = 46
    case closeLoginSession = 47
    case beginBackup = 48
    case continueBackup = 49
    case beginRestore = 50
    case restoreChunk = 51
    case finishRestore = 52
    case keychainProtection = 53
    case sync = 54
    case watchChanges = 55
    case searchSecretItemsWithContentTypes = 56

    /// This request's facts.
    public var facts: RequestFacts {
        switch self {
        case .add: RequestFacts(createsKeychain: true, audit: .itemAccess)
        case .copyMatching: RequestFacts(readOnly: true, audit: .itemAccess)
        case .update, .delete: RequestFacts(audit: .itemAccess)
        case .deviceStatus, .biometryStatus, .countItems, .keychainProtection: RequestFacts(readOnly: true)
        case .invalidateContext: RequestFacts()
        case .endBiometricMatch: RequestFacts(answeredBy: .embeddedKeychain)
        case .lock: RequestFacts(ownerSessions: .endsAll)
        case .verifyPasscode: RequestFacts(answeredBy: .embeddedKeychain, audit: .passcodeCheck)
        case .unlock, .setEraseAfterFailedAttempts, .erase: RequestFacts(audit: .passcodeCheck)
        case .setPasscode: RequestFacts(createsKeychain: true, ownerSessions: .endsAll, audit: .passcodeCheck)
        case .removePasscode: RequestFacts(ownerSessions: .endsAll, audit: .passcodeCheck)
        case .awaitBiometricMatch: RequestFacts(answeredBy: .embeddedKeychain, createsKeychain: true)
        case .enrollFinger, .removeFinger, .setSimulatedSensor:
            RequestFacts(createsKeychain: true, audit: .passcodeCheck)
        case .simulateTouch: RequestFacts(createsKeychain: true, needsOwnerSession: true)
        case .daemonStatus, .identify: RequestFacts(answeredBy: .daemon, readOnly: true)
        case .openOwnerSession: RequestFacts(ownerSessions: .opens, audit: .ownerSession)
        case .openOwnerSessionByBiometry: RequestFacts(ownerSessions: .opensOnMatch, audit: .ownerSessionByFingerprint)
        case .closeOwnerSession: RequestFacts(ownerSessions: .closes, audit: .ownerSession)
        case .setEntitlement: RequestFacts(perUserModeOnly: true, audit: .entitlement)
        case .listEntitlements, .listDeclaredApps: RequestFacts(perUserModeOnly: true, readOnly: true)
        case .declareApp: RequestFacts(perUserModeOnly: true, audit: .appDeclaration)
        case .eraseUnopenableKeychain: RequestFacts()
        case .beginImport, .importChunk: RequestFacts(answeredBy: .systemDaemon)
        case .finishImport: RequestFacts(answeredBy: .systemDaemon, audit: .keychainImport)
        case .createEnclaveKey: RequestFacts(createsKeychain: true, audit: .enclaveKeyMade)
        case .useEnclaveKey: RequestFacts(audit: .enclaveKeyUsed)
        case .authenticateOwner, .unlockBySheet: RequestFacts(drawsSheet: true, audit: .ownerAuthentication)
        case .openOwnerSessionBySheet:
            RequestFacts(ownerSessions: .opensOnAuthentication, drawsSheet: true, audit: .ownerAuthentication)
        case .servePrompts: RequestFacts(answeredBy: .daemon, audit: .promptAgent)
        case .actForProcess: RequestFacts(answeredBy: .daemon, readOnly: true, audit: .actForProcess)
        case .searchSecretItems, .searchSecretItemsWithContentTypes:
            RequestFacts(secretServiceBridgeOnly: true, readOnly: true)
        case .watchChanges: RequestFacts(answeredBy: .daemon, readOnly: true)
        case .readOtherAppSecretItem: RequestFacts(secretServiceBridgeOnly: true, audit: .otherAppSecretItem)
        case .allowOtherAppSecretItem:
            RequestFacts(secretServiceBridgeOnly: true, drawsSheet: true, audit: .otherAppSecretItem)
        case .unlockByBiometry: RequestFacts(drawsSheet: true, audit: .unlockByFingerprint)
        case .openLoginSession, .closeLoginSession: RequestFacts(answeredBy: .daemon, audit: .loginSession)
        case .beginBackup: RequestFacts(needsOwnerSession: true)
        case .continueBackup: RequestFacts(needsOwnerSession: true, audit: .backup)
        case .beginRestore, .restoreChunk: RequestFacts(createsKeychain: true, needsOwnerSession: true)
        case .finishRestore: RequestFacts(createsKeychain: true, needsOwnerSession: true, audit: .restore)
        case .sync: RequestFacts(createsKeychain: true, needsOwnerSession: true, audit: .sync)
        }
    }
}

/// What is true of one kind of request wherever it is answered (``RequestKind/facts``).
public struct RequestFacts: Sendable, Equatable {
    /// Who answers a request.
    public enum Handler: Sendable, Equatable {
        /// The keychain server, in keychaind or embedded in the program.
        case keychain
        /// The embedded keychain alone, which trusts its program anyway. keychaind draws the
        /// owner's sheet itself (``KeychainRequest/authenticateOwner(_:)``): it takes no passcode
        /// and no wait for a touch from an app, so the passcode never passes through one.
        case embeddedKeychain
        /// keychaind itself; the embedded keychain answers that there is no daemon.
        case daemon
        /// The system daemon (`keychaind --system`) alone; every other answers that only it does.
        case systemDaemon
    }

    /// What a request that succeeds does to the owner sessions of its keychain (keychaind).
    public enum OwnerSessionEffect: Sendable, Equatable {
        case none
        /// Opens the caller's session (the passcode was right).
        case opens
        /// Opens the caller's session when the reply is a matching touch.
        case opensOnMatch
        /// Opens the caller's session when the reply is a successful owner authentication.
        case opensOnAuthentication
        /// Closes the caller's session.
        case closes
        /// Ends every session: the keychain forgot every grant.
        case endsAll
    }

    /// The line the audit log writes for a request (never a secret).
    public enum AuditLine: Sendable, Equatable {
        case none
        /// An item added, read, searched, changed or deleted: its class and service.
        case itemAccess
        /// A passcode was checked (an unlock, a change, a guarded setting).
        case passcodeCheck
        /// An owner session opened or closed with the passcode.
        case ownerSession
        /// A touch while an owner session waits for a fingerprint (not each empty poll).
        case ownerSessionByFingerprint
        /// A touch while an unlock waits for a fingerprint (not each empty poll).
        case unlockByFingerprint
        /// A login session opened or closed (the PAM module), and how many are left.
        case loginSession
        /// An app was granted or refused a shared access group.
        case entitlement
        /// An app was declared or its declaration removed.
        case appDeclaration
        /// A per-user keychain was moved into the system daemon.
        case keychainImport
        /// An Enclave key was made.
        case enclaveKeyMade
        /// An Enclave key signed or agreed a secret.
        case enclaveKeyUsed
        /// The keychain asked the owner to authenticate for an app: the outcome.
        case ownerAuthentication
        /// A prompt agent offered to draw its user's sheets.
        case promptAgent
        /// A Secret Service bridge named the D-Bus client it acts for.
        case actForProcess
        /// An app read, or asked the owner to read, another app's Secret Service item.
        case otherAppSecretItem
        /// A backup was made (on its last part): how many items it holds.
        case backup
        /// A backup was restored: what it did.
        case restore
        /// The owner set up, joined, changed or ran sync: what it refused of the remote.
        case sync
    }

    /// Who answers it.
    public var answeredBy: Handler
    /// True when it creates the keychain where there is none (it writes); every other request
    /// gets the answer of an empty keychain and leaves nothing behind.
    public var createsKeychain: Bool
    /// What it does to owner sessions.
    public var ownerSessions: OwnerSessionEffect
    /// keychaind answers it only in an owner session (the simulated sensor is the owner's
    /// finger; a backup holds every app's items).
    public var needsOwnerSession: Bool
    /// The system daemon refuses it: there the app registry, which root edits, says what apps
    /// are and which groups they share.
    public var perUserModeOnly: Bool
    /// The keychain draws its sheet for it and waits on a person: keychaind counts it in none
    /// of the user's request slots.
    public var drawsSheet: Bool
    /// keychaind takes it only on a connection the Secret Service bridge opened for a D-Bus
    /// client (``KeychainRequest/actForProcess(_:)``).
    public var secretServiceBridgeOnly: Bool
    /// It changes nothing a search could see: no item, no lock state, no grant, no setting.
    /// keychaind moves its change number (``KeychainRequest/watchChanges``) after every other
    /// request, answered or refused, before the reply is sent; a request marked so by mistake
    /// would leave a search the bridge keeps standing when it should not, so only requests that
    /// read alone are.
    public var readOnly: Bool
    /// What the audit log says of it.
    public var audit: AuditLine

    /// Facts; what is not said is the common case.
    public init(
        answeredBy: Handler = .keychain, createsKeychain: Bool = false, ownerSessions: OwnerSessionEffect = .none,
        needsOwnerSession: Bool = false, perUserModeOnly: Bool = false, secretServiceBridgeOnly: Bool = false,
        drawsSheet: Bool = false, readOnly: Bool = false, audit: AuditLine = .none
    ) {
        self.readOnly = readOnly
        self.secretServiceBridgeOnly = secretServiceBridgeOnly
        self.answeredBy = answeredBy
        self.createsKeychain = createsKeychain
        self.ownerSessions = ownerSessions
        self.needsOwnerSession = needsOwnerSession
        self.perUserModeOnly = perUserModeOnly
        self.drawsSheet = drawsSheet
        self.audit = audit
    }

    /// It opens the caller's owner session when it succeeds.
    public var opensOwnerSession: Bool {
        [.opens, .opensOnMatch, .opensOnAuthentication].contains(ownerSessions)
    }
}

extension KeychainRequest {
    /// What kind of request this is.
    public var kind: RequestKind {
        switch self {
        case .add: .add
        case .copyMatching: .copyMatching
        case .update: .update
        case .delete: .delete
        case .deviceStatus: .deviceStatus
        case .lock: .lock
        case .unlock: .unlock
        case .setPasscode: .setPasscode
        case .removePasscode: .removePasscode
        case .erase: .erase
        case .countItems: .countItems
        case .setEraseAfterFailedAttempts: .setEraseAfterFailedAttempts
        case .verifyPasscode: .verifyPasscode
        case .biometryStatus: .biometryStatus
        case .awaitBiometricMatch: .awaitBiometricMatch
        case .endBiometricMatch: .endBiometricMatch
        case .invalidateContext: .invalidateContext
        case .enrollFinger: .enrollFinger
        case .removeFinger: .removeFinger
        case .setSimulatedSensor: .setSimulatedSensor
        case .simulateTouch: .simulateTouch
        case .daemonStatus: .daemonStatus
        case .identify: .identify
        case .openOwnerSession: .openOwnerSession
        case .openOwnerSessionByBiometry: .openOwnerSessionByBiometry
        case .closeOwnerSession: .closeOwnerSession
        case .setEntitlement: .setEntitlement
        case .listEntitlements: .listEntitlements
        case .declareApp: .declareApp
        case .listDeclaredApps: .listDeclaredApps
        case .eraseUnopenableKeychain: .eraseUnopenableKeychain
        case .beginImport: .beginImport
        case .importChunk: .importChunk
        case .finishImport: .finishImport
        case .createEnclaveKey: .createEnclaveKey
        case .useEnclaveKey: .useEnclaveKey
        case .authenticateOwner: .authenticateOwner
        case .servePrompts: .servePrompts
        case .unlockBySheet: .unlockBySheet
        case .openOwnerSessionBySheet: .openOwnerSessionBySheet
        case .actForProcess: .actForProcess
        case .searchSecretItems: .searchSecretItems
        case .readOtherAppSecretItem: .readOtherAppSecretItem
        case .allowOtherAppSecretItem: .allowOtherAppSecretItem
        case .unlockByBiometry: .unlockByBiometry
        case .openLoginSession: .openLoginSession
        case .closeLoginSession: .closeLoginSession
        case .beginBackup: .beginBackup
        case .continueBackup: .continueBackup
        case .beginRestore: .beginRestore
        case .restoreChunk: .restoreChunk
        case .finishRestore: .finishRestore
        case .keychainProtection: .keychainProtection
        case .sync: .sync
        case .watchChanges: .watchChanges
        case .searchSecretItemsWithContentTypes: .searchSecretItemsWithContentTypes
        }
    }
}
