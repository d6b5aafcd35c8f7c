import Foundation

/// Everything a client can ask of the keychain, in typed form.
///
/// Dictionaries and command lines are parsed into these before anything acts on them; the
/// server sees only this enum. A transport carries one request and one reply.
public enum KeychainRequest: Sendable {
    /// `SecItemAdd`.
    case add(NewItem)
    /// `SecItemCopyMatching`.
    case copyMatching(ItemQuery)
    /// `SecItemUpdate`: every match.
    case update(ItemQuery, ItemChanges)
    /// `SecItemDelete`: every match; answered with how many were deleted.
    case delete(ItemQuery)
    /// The device's protection state.
    case deviceStatus
    /// Drop the keys of the classes that need the device unlocked.
    case lock
    /// Unlock with the device passcode.
    case unlock(passcode: SecretBytes)
    /// Set the passcode (`current` nil when none is set) or change it.
    case setPasscode(current: SecretBytes?, new: SecretBytes)
    /// Remove the passcode; destroys the WhenPasscodeSet class and its items (answered with
    /// how many were deleted).
    case removePasscode(current: SecretBytes)
    /// Erase every item and class key (the owner's tool only; the passcode when one is set);
    /// answered with how many items were erased.
    case erase(passcode: SecretBytes?)
    /// How many items the keychain holds, of one accessibility or of any (the owner's tool
    /// only; nothing is decrypted).
    case countItems(accessibility: Accessibility?)
    /// Turn "erase all data after 10 failed passcode attempts" on or off.
    case setEraseAfterFailedAttempts(Bool, passcode: SecretBytes)
    /// Check the device passcode for an authentication of `context` (counted like an unlock
    /// attempt; does not change the lock state). The server keeps the grant under the context.
    case verifyPasscode(SecretBytes, context: AuthenticationContextID)
    /// The state of biometric authentication.
    case biometryStatus
    /// Wait up to `timeout` seconds for one touch on the sensor and match it for `context`
    /// (a match's grant stays in the server, under the context).
    case awaitBiometricMatch(timeout: Double, context: AuthenticationContextID)
    /// Stop waiting for touches (the prompt closed).
    case endBiometricMatch
    /// Forget what `context` earned (`LAContext.invalidate()`).
    case invalidateContext(AuthenticationContextID)
    /// Enroll a finger (needs the passcode).
    case enrollFinger(name: String, passcode: SecretBytes)
    /// Remove an enrolled finger (needs the passcode).
    case removeFinger(name: String, passcode: SecretBytes)
    /// Turn the simulated sensor on or off (needs the passcode).
    case setSimulatedSensor(Bool, passcode: SecretBytes)
    /// Touch the simulated sensor: with an enrolled finger (`matching`, optionally which one) or
    /// with an unknown one.
    case simulateTouch(matching: Bool, finger: String?)
    /// The daemon's own state (only `keychaind` answers it).
    case daemonStatus
    /// Nothing but a reply (`done`), which tells that the daemon has identified the caller
    /// (only `keychaind` answers it; it opens no keychain). The greeting already tells so, as it
    /// comes only after the identification: `DaemonTransport.identifyThisProcess()` no longer
    /// sends this. It stays answered, as every released request does.
    case identify
    /// Open an owner session with the passcode: for a while, this app in this login session
    /// sees every access group (keychaind; the embedded keychain only checks the passcode).
    case openOwnerSession(passcode: SecretBytes)
    /// Open an owner session with a fingerprint: the daemon waits up to `timeout` seconds
    /// (0 to 60) for a touch of a real sensor (fprintd) and answers `match`; on a match, the
    /// session opens. The touch is asked for this purpose alone: no grant an app earned
    /// elsewhere opens a session. The simulated sensor cannot open one (its touches come from an
    /// owner session).
    case openOwnerSessionByBiometry(timeout: Double)
    /// End this app's owner session.
    case closeOwnerSession
    /// Let `app` use the shared access group `group`, or no longer (the owner only).
    case setEntitlement(app: String, group: String, granted: Bool)
    /// The shared groups granted to each app (the owner only).
    case listEntitlements
    /// Declare what the app running `executable` (an absolute path) is: its application
    /// identifier and access groups; nil removes the declaration (the owner only; per-user mode).
    case declareApp(executable: String, declaration: AppDeclaration?)
    /// The apps declared, by executable (the owner only).
    case listDeclaredApps
    /// Remove the files of a keychain that cannot be opened (they do not belong together, or
    /// one is missing or altered): the way out besides restoring them. Refused while the
    /// keychain opens. Answered with how many items the database held (`count`), or `done`
    /// when it could not tell.
    case eraseUnopenableKeychain
    /// Start moving the caller's per-user keychain into the system daemon
    /// (`keychainctl daemon migrate-to-system`): the daemon makes an empty staging directory
    /// for this connection. Only `keychaind --system` answers it.
    case beginImport
    /// Part of one of the per-user keychain's files, at `offset` (each file is sent in order,
    /// in parts of at most ``KeychainRequest/maximumImportChunk`` bytes).
    case importChunk(file: String, offset: Int, bytes: SecretBytes)
    /// Check the staged keychain (it opens, its passcode is `passcode` when it has one, every
    /// row passes its ledger) and make it the caller's system keychain, atomically; answered
    /// with how many items it holds (`count`). Refused when the caller already has one.
    case finishImport(passcode: SecretBytes?)
    /// Make a P-256 key inside the Enclave, sealed to it, to the caller's default access group,
    /// to `accessibility`'s class key and to `accessControl`, which every use must satisfy;
    /// answered with the sealed key and its public key (`enclaveKey`). The private key never
    /// leaves the Enclave (`kSecAttrTokenIDSecureEnclave`, CryptoKit's `SecureEnclave`).
    case createEnclaveKey(accessibility: Accessibility, accessControl: AccessControl?)
    /// Sign with, or agree a secret with, an Enclave key (``EnclaveKeyUse``); answered with the
    /// signature or the shared secret (`keyOutput`). Refused for a key sealed to a group the
    /// caller is not in, or whose access control the context's evaluations do not satisfy
    /// (errSecInteractionNotAllowed carrying it, as for items).
    case useEnclaveKey(EnclaveKeyUse)
    /// Authenticate the device owner (``OwnerAuthentication``): the keychain draws the sheet in
    /// a window on the app's desktop or on its terminal, reads the passcode or waits for the
    /// touch, and files the grant under the request's context. Answered with the biometry status
    /// the evaluation ran with (`biometry`), or why it did not succeed (`authenticationFailed`).
    case authenticateOwner(OwnerAuthentication)
    /// Make this connection its user's prompt agent (system daemon only; the app must be
    /// registered as one): after the reply, the daemon sends ``PromptAgentCommand``s on it and
    /// the agent answers each with a ``PromptAgentEvent``, until either closes it.
    case servePrompts
    /// Unlock with the passcode, typed on the keychain's own sheet (``authenticateOwner(_:)``'s,
    /// for `factors` `.passcode` only): the program that asks never sees it. Answered as an
    /// authentication is; with no passcode set, nothing is locked and it succeeds at once.
    case unlockBySheet(OwnerAuthentication)
    /// Open an owner session (as ``openOwnerSession(passcode:)``) once the owner authenticates
    /// on the keychain's own sheet, by a touch or the passcode as `factors` allow: the program
    /// that asks never sees the passcode. Nothing is filed under the request's context. Answered
    /// as an authentication is; the session opens when it succeeded.
    case openOwnerSessionBySheet(OwnerAuthentication)
    /// From now on, this connection's requests are those of `process`, a process of the same
    /// user, and are answered as that app's: the Secret Service bridge (`keychain-secret-service`)
    /// opens one connection per D-Bus client and names the client with it. Only a bridge
    /// keychaind trusts may ask (the `keychain-secret-service` beside the per-user daemon; in
    /// system mode the program registered as the Secret Service bridge), once per connection;
    /// every later request must still be written by the bridge. Answered `done`.
    case actForProcess(ProcessReference)
    /// The Secret Service items of every app that have every one of `attributes` (raw names:
    /// `svce`, and `ss:NAME` for a Secret Service attribute), in one search, for the bridge's
    /// `SearchItems`, which lists another app's items as locked until the owner lets the caller
    /// read them. Answered with `secretItemMatches`: each match's `svce` and `acct`, readable
    /// for the caller's own and another app's the owner let it read
    /// (``allowOtherAppSecretItem(service:account:_:)``). Only a connection of the Secret
    /// Service bridge may ask.
    case searchSecretItems([String: AttributeValue])
    /// ``searchSecretItems(_:)``, its matches of the caller's own items carrying their secrets'
    /// content types (``SecretItemMatch/contentType``) when there are at most 100 matches, so
    /// that the bridge asks for a found item's secret alone. A request of its own, so that a
    /// bridge and a keychaind of different builds (an upgrade leaves a running keychaind's code
    /// as it was) still understand each other: a keychaind that does not know it refuses it
    /// (`errSecDecode`), and the bridge asks ``searchSecretItems(_:)`` instead, whose answer is
    /// as it always was.
    case searchSecretItemsWithContentTypes([String: AttributeValue])
    /// Another app's Secret Service item (`svce`, `acct`) that the owner let the caller read:
    /// its attributes (but its access group) and its secret, as `items`. Refused with
    /// `errSecInteractionNotAllowed` until the owner allows it, `errSecItemNotFound` when there
    /// is none. Read only: nothing lets an app change another's item. The bridge only.
    case readOtherAppSecretItem(service: String, account: String)
    /// keychaind's change number of the caller's keychain, for the bridge to know, without a
    /// request, that nothing a search sees changed since an answer it keeps: answered `done`,
    /// and followed on the connection by one byte carrying a descriptor (`SCM_RIGHTS`) of the
    /// number's memory, sealed so that only keychaind writes it. The number moves before the
    /// reply to every request that may change an item, the lock state or a grant is sent, and at
    /// every lock and sync keychaind makes itself. Only the Secret Service bridge keychaind
    /// trusts may ask, on a connection of its own or one acting for a D-Bus client.
    case watchChanges
    /// Asks the owner, on the keychain's sheet, whether the caller may read another app's
    /// Secret Service item: Deny or Allow; once the owner authenticates (a touch or the
    /// passcode, as `authentication`'s factors allow), Only This Time (until this connection
    /// closes) or Always Allow (kept in the owner's entitlements: `keychainctl apps list`,
    /// `apps revoke`). The sheet's text is the keychain's: who asks, the item's label, and the
    /// app that saved it. Answered as an authentication is. The bridge only.
    case allowOtherAppSecretItem(service: String, account: String, OwnerAuthentication)
    /// Unlock with a fingerprint, which keychaind verifies itself (fprintd, asked for this):
    /// waits up to `timeout` seconds (0 to 60) for a touch, matched and counted as every touch is,
    /// and answers `match`. A match unlocks only when the keychain's passcode unlocked it since
    /// keychaind started, within 48 hours, and biometry is not locked out; otherwise it is
    /// refused (`errSecInteractionNotAllowed`, `errSecAuthFailed`) and the passcode is needed, as
    /// on an iPhone. The simulated sensor cannot unlock (its touches come from an owner session).
    case unlockByBiometry(timeout: Double)
    /// A login session of the user opened (the PAM module, through `keychainctl pam
    /// open-session`): keychaind counts it while `process`, the program that opened it (`login`,
    /// `sshd`'s session process, `su`), is alive. Answered with the number of login sessions
    /// counted (`count`). keychaind only; what it counts is forgotten when it stops.
    case openLoginSession(ProcessReference)
    /// The login session that `process` opened ended: keychaind forgets it and every session
    /// whose process is gone, and, when none is left and `lockWhenLast` is true, locks the
    /// keychain. Answered with the number of sessions left (`count`). keychaind only.
    case closeLoginSession(ProcessReference, lockWhenLast: Bool)
    /// Begins an encrypted backup of every item the rules let out (Docs/Backup.md), under a key
    /// derived from `password`; answered with the file's header (`backupPart`). Owner only; the
    /// keychain must be unlocked.
    case beginBackup(password: SecretBytes)
    /// The backup's next part (`backupPart`); the last carries the summary, and ends the backup.
    case continueBackup
    /// Begins a restore of a backup file, whose bytes follow in ``restoreChunk(_:)``. An item
    /// the keychain holds already (same primary key) is replaced when the backup's copy is newer
    /// or `replacing` is true, and kept otherwise. Owner only; the keychain must be unlocked.
    case beginRestore(password: SecretBytes, replacing: Bool)
    /// The backup file's next bytes, at most ``maximumRestoreChunk``; answered with how many
    /// items were read so far (`count`). A wrong password or a damaged file fails here or at
    /// the end, and nothing is changed.
    case restoreChunk(SecretBytes)
    /// Checks that the file ended where it should, then puts its items in the keychain in one
    /// transaction (`restored`).
    case finishRestore
    /// How the device secret is kept: in a file, or sealed to a TPM with a counter against
    /// rollback (`keychainProtection`).
    case keychainProtection
    /// Sync across the owner's devices (`sync`): set up, join, sync now, status, approve a
    /// device, remove one.
    case sync(SyncCommand)

    /// The largest part of a backup file a ``restoreChunk(_:)`` carries.
    public static let maximumRestoreChunk = 512 << 10
    /// The largest part of a file an ``importChunk(file:offset:bytes:)`` carries.
    public static let maximumImportChunk = 512 << 10
    /// The files of a keychain directory an import moves, in the order they are sent; the
    /// daemon refuses any other name.
    public static let importedFileNames = [
        "device-secret", "keybag", "attempts", "biometry", "entitlements", "database-state", "keychain.db",
        "keychain.db-wal",
    ]
}

/// What the keychain answers.
public enum KeychainReply: Sendable {
    /// The request succeeded with nothing to return.
    case done
    /// Items found or added, shaped by the request's return selection.
    case items([ItemResult])
    /// The device's protection state.
    case status(DeviceStatus)
    /// The state of biometric authentication.
    case biometry(BiometryStatus)
    /// The outcome of waiting for a touch.
    case match(BiometricMatch)
    /// How many items a deletion, an erase or a count concerned.
    case count(Int)
    /// The daemon's own state.
    case daemon(DaemonStatus)
    /// App identity → the shared access groups it may use.
    case entitlements([String: [String]])
    /// Executable → what it is declared to be.
    case declaredApps([String: AppDeclaration])
    /// A new Enclave key: its sealed form and its public key (X9.63).
    case enclaveKey(sealedKey: Data, publicKey: Data)
    /// What an Enclave key made: a signature or a shared secret.
    case keyOutput(SecretBytes)
    /// An owner authentication that did not succeed, and what the sheet said of it.
    case authenticationFailed(OwnerAuthenticationFailure, message: String)
    /// The Secret Service items a bridge's search found.
    case secretItemMatches([SecretItemMatch])
    /// A part of a backup file.
    case backupPart(BackupPart)
    /// What a restore did.
    case restored(RestoreReport)
    /// How the device secret is kept.
    case keychainProtection(KeychainProtection)
    /// Where sync stands.
    case sync(SyncReport)
    /// The app keychaind decided the process named by ``KeychainRequest/actForProcess(_:)`` is,
    /// by its own rules (a registered app, a path, `untrusted:` and a path): what the Secret
    /// Service bridge keys that client's `session` items by.
    case actingFor(app: String)
}
