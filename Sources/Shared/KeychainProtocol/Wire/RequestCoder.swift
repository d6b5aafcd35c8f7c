/// The one place where bytes from a client become a ``KeychainRequest``, and where a request
/// becomes bytes. The daemon acts only on what this returns; everything else is refused with
/// ``WireError``.
///
/// Each request is its version byte, its tag (``RequestKind``, where each tag is assigned once),
/// and its fields.
public enum RequestCoder {
    /// Decodes one request body (the bytes after the frame's length prefix).
    ///
    /// - Throws: ``WireError`` for a wrong version, an unknown tag, a field over its limit,
    ///   truncated bytes or bytes left over.
    public static func decode(_ body: [UInt8]) throws(WireError) -> KeychainRequest {
        guard body.count <= WireFrame.maximumRequest else {
            throw WireError("a request larger than \(WireFrame.maximumRequest) bytes")
        }
        var reader = WireReader(body)
        try WireFrame.readVersion(&reader)
        let request = try read(&reader)
        try reader.finish()
        return request
    }

    /// The body of `request`. It may hold a secret: wipe it once sent.
    public static func encode(_ request: KeychainRequest) -> [UInt8] {
        var writer = WireWriter()
        writer.u8(WireFrame.version)
        write(request, to: &writer)
        return writer.finish()
    }

    private static func read(_ reader: inout WireReader) throws(WireError) -> KeychainRequest {
        let secret = WireValues.secret
        let tag = try reader.u8()
        guard let kind = RequestKind(rawValue: tag) else { throw WireError("an unknown request (tag \(tag))") }
        switch kind {
        case .add: return .add(try WireValues.newItem(&reader))
        case .copyMatching: return .copyMatching(try WireValues.query(&reader))
        case .update: return .update(try WireValues.query(&reader), try WireValues.changes(&reader))
        case .delete: return .delete(try WireValues.query(&reader))
        case .deviceStatus: return .deviceStatus
        case .lock: return .lock
        case .unlock: return .unlock(passcode: try secret(&reader))
        case .setPasscode: return .setPasscode(current: try reader.optional(secret), new: try secret(&reader))
        case .removePasscode: return .removePasscode(current: try secret(&reader))
        case .erase: return .erase(passcode: try reader.optional(secret))
        case .countItems:
            return .countItems(
                accessibility: try reader.optional { (reader: inout WireReader) throws(WireError) in
                    try WireValues.token(&reader, Accessibility.self)
                })
        case .setEraseAfterFailedAttempts:
            return .setEraseAfterFailedAttempts(try reader.bool(), passcode: try secret(&reader))
        case .verifyPasscode: return .verifyPasscode(try secret(&reader), context: try WireValues.contextID(&reader))
        case .biometryStatus: return .biometryStatus
        case .awaitBiometricMatch:
            return .awaitBiometricMatch(timeout: try reader.seconds(in: 0...86_400), context: try WireValues.contextID(&reader))
        case .endBiometricMatch: return .endBiometricMatch
        case .invalidateContext: return .invalidateContext(try WireValues.contextID(&reader))
        case .enrollFinger:
            return .enrollFinger(name: try reader.string(max: WireValues.maximumToken), passcode: try secret(&reader))
        case .removeFinger:
            return .removeFinger(name: try reader.string(max: WireValues.maximumToken), passcode: try secret(&reader))
        case .setSimulatedSensor: return .setSimulatedSensor(try reader.bool(), passcode: try secret(&reader))
        case .simulateTouch:
            return .simulateTouch(
                matching: try reader.bool(),
                finger: try reader.optional { (reader: inout WireReader) throws(WireError) in
                    try reader.string(max: WireValues.maximumToken)
                })
        case .daemonStatus: return .daemonStatus
        case .openOwnerSession: return .openOwnerSession(passcode: try secret(&reader))
        case .closeOwnerSession: return .closeOwnerSession
        case .setEntitlement:
            return .setEntitlement(
                app: try reader.string(max: KeychainLimits.maximumAttributeSize),
                group: try reader.string(max: KeychainLimits.maximumAttributeSize),
                granted: try reader.bool())
        case .listEntitlements: return .listEntitlements
        case .eraseUnopenableKeychain: return .eraseUnopenableKeychain
        case .openOwnerSessionByBiometry: return .openOwnerSessionByBiometry(timeout: try reader.seconds(in: 0...86_400))
        case .identify: return .identify
        case .beginImport: return .beginImport
        case .importChunk:
            return .importChunk(
                file: try reader.string(max: WireValues.maximumToken), offset: try reader.int(in: 0...(1 << 40)),
                bytes: try reader.secret(max: KeychainRequest.maximumImportChunk))
        case .finishImport: return .finishImport(passcode: try reader.optional(secret))
        case .declareApp:
            return .declareApp(
                executable: try reader.string(max: KeychainLimits.maximumAttributeSize),
                declaration: try reader.optional(WireValues.appDeclaration))
        case .listDeclaredApps: return .listDeclaredApps
        case .createEnclaveKey:
            return .createEnclaveKey(
                accessibility: try WireValues.token(&reader, Accessibility.self),
                accessControl: try reader.optional(WireValues.accessControl))
        case .useEnclaveKey: return .useEnclaveKey(try WireValues.enclaveKeyUse(&reader))
        case .authenticateOwner: return .authenticateOwner(try WireValues.ownerAuthentication(&reader))
        case .servePrompts: return .servePrompts
        case .unlockBySheet: return .unlockBySheet(try WireValues.ownerAuthentication(&reader))
        case .openOwnerSessionBySheet: return .openOwnerSessionBySheet(try WireValues.ownerAuthentication(&reader))
        case .actForProcess: return .actForProcess(try processReference(&reader))
        case .searchSecretItems: return .searchSecretItems(try WireValues.attributes(&reader))
        case .searchSecretItemsWithContentTypes:
            return .searchSecretItemsWithContentTypes(try WireValues.attributes(&reader))
        case .watchChanges: return .watchChanges
        case .readOtherAppSecretItem:
            return .readOtherAppSecretItem(
                service: try reader.string(max: KeychainLimits.maximumAttributeSize),
                account: try reader.string(max: KeychainLimits.maximumAttributeSize))
        case .allowOtherAppSecretItem:
            return .allowOtherAppSecretItem(
                service: try reader.string(max: KeychainLimits.maximumAttributeSize),
                account: try reader.string(max: KeychainLimits.maximumAttributeSize),
                try WireValues.ownerAuthentication(&reader))
        case .unlockByBiometry: return .unlockByBiometry(timeout: try reader.seconds(in: 0...86_400))
        case .openLoginSession: return .openLoginSession(try processReference(&reader))
        case .closeLoginSession:
            return .closeLoginSession(try processReference(&reader), lockWhenLast: try reader.bool())
        case .beginBackup: return .beginBackup(password: try secret(&reader))
        case .continueBackup: return .continueBackup
        case .beginRestore: return .beginRestore(password: try secret(&reader), replacing: try reader.bool())
        case .restoreChunk: return .restoreChunk(try reader.secret(max: KeychainRequest.maximumRestoreChunk))
        case .finishRestore: return .finishRestore
        case .keychainProtection: return .keychainProtection
        case .sync: return .sync(try SyncCoding.command(&reader))
        }
    }

    private static func processReference(_ reader: inout WireReader) throws(WireError) -> ProcessReference {
        ProcessReference(pid: Int32(bitPattern: try reader.u32()), startTime: try reader.u64())
    }

    private static func write(_ process: ProcessReference, to writer: inout WireWriter) {
        writer.u32(UInt32(bitPattern: process.pid))
        writer.u64(process.startTime)
    }

    private static func write(_ request: KeychainRequest, to writer: inout WireWriter) {
        writer.u8(request.kind.rawValue)
        switch request {
        case .add(let item): WireValues.write(item, to: &writer)
        case .copyMatching(let query): WireValues.write(query, to: &writer)
        case .update(let query, let changes):
            WireValues.write(query, to: &writer); WireValues.write(changes, to: &writer)
        case .delete(let query): WireValues.write(query, to: &writer)
        case .unlock(let passcode): writer.secret(passcode)
        case .setPasscode(let current, let new): writer.optional(current) { $0.secret($1) }; writer.secret(new)
        case .removePasscode(let current): writer.secret(current)
        case .erase(let passcode): writer.optional(passcode) { $0.secret($1) }
        case .countItems(let accessibility): writer.optional(accessibility) { $0.string($1.rawValue) }
        case .setEraseAfterFailedAttempts(let enabled, let passcode): writer.bool(enabled); writer.secret(passcode)
        case .verifyPasscode(let passcode, let context): writer.secret(passcode); writer.data(context.bytes)
        case .awaitBiometricMatch(let timeout, let context): writer.double(timeout); writer.data(context.bytes)
        case .invalidateContext(let context): writer.data(context.bytes)
        case .enrollFinger(let name, let passcode): writer.string(name); writer.secret(passcode)
        case .removeFinger(let name, let passcode): writer.string(name); writer.secret(passcode)
        case .setSimulatedSensor(let enabled, let passcode): writer.bool(enabled); writer.secret(passcode)
        case .simulateTouch(let matching, let finger): writer.bool(matching); writer.optional(finger) { $0.string($1) }
        case .openOwnerSession(let passcode): writer.secret(passcode)
        case .setEntitlement(let app, let group, let granted):
            writer.string(app); writer.string(group); writer.bool(granted)
        case .openOwnerSessionByBiometry(let timeout): writer.double(timeout)
        case .importChunk(let file, let offset, let bytes):
            writer.string(file); writer.int(offset); writer.secret(bytes)
        case .finishImport(let passcode): writer.optional(passcode) { $0.secret($1) }
        case .declareApp(let executable, let declaration):
            writer.string(executable); writer.optional(declaration) { WireValues.write($1, to: &$0) }
        case .createEnclaveKey(let accessibility, let accessControl):
            writer.string(accessibility.rawValue); writer.optional(accessControl) { WireValues.write($1, to: &$0) }
        case .useEnclaveKey(let use): WireValues.write(use, to: &writer)
        case .authenticateOwner(let authentication), .unlockBySheet(let authentication),
            .openOwnerSessionBySheet(let authentication):
            WireValues.write(authentication, to: &writer)
        case .actForProcess(let process), .openLoginSession(let process): write(process, to: &writer)
        case .closeLoginSession(let process, let lockWhenLast): write(process, to: &writer); writer.bool(lockWhenLast)
        case .unlockByBiometry(let timeout): writer.double(timeout)
        case .beginBackup(let password): writer.secret(password)
        case .beginRestore(let password, let replacing): writer.secret(password); writer.bool(replacing)
        case .restoreChunk(let bytes): writer.secret(bytes)
        case .sync(let command): SyncCoding.write(command, to: &writer)
        case .searchSecretItems(let attributes), .searchSecretItemsWithContentTypes(let attributes):
            WireValues.write(attributes, to: &writer)
        case .readOtherAppSecretItem(let service, let account): writer.string(service); writer.string(account)
        case .allowOtherAppSecretItem(let service, let account, let authentication):
            writer.string(service); writer.string(account); WireValues.write(authentication, to: &writer)
        case .deviceStatus, .lock, .biometryStatus, .endBiometricMatch, .daemonStatus, .closeOwnerSession,
            .listEntitlements, .eraseUnopenableKeychain, .identify, .beginImport, .listDeclaredApps, .servePrompts,
            .continueBackup, .finishRestore, .keychainProtection, .watchChanges:
            break  // the tag is the whole request
        }
    }
}
