/// The one place where bytes from a client become a ``KeychainRequest`` (and where a request
/// becomes bytes). The daemon acts only on what this returns; everything else is refused with
/// ``WireError``.
///
/// Each request is its version byte, a tag naming the request, and the request's fields; the
/// tags below never change meaning within a protocol version.
public enum RequestParser {
    /// Parses one request body (the bytes after the frame's length prefix).
    ///
    /// - Throws: ``WireError`` for a wrong version, an unknown tag, a field over its limit,
    ///   truncated bytes or bytes left over.
    public static func parse(_ body: [UInt8]) throws(WireError) -> KeychainRequest {
        guard body.count <= WireFrame.maximumRequest else { throw WireError("a request larger than \(WireFrame.maximumRequest) bytes") }
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
        switch try reader.u8() {
        case 1: return .add(try WireValues.newItem(&reader))
        case 2: return .copyMatching(try WireValues.query(&reader))
        case 3: return .update(try WireValues.query(&reader), try WireValues.changes(&reader))
        case 4: return .delete(try WireValues.query(&reader))
        case 5: return .deviceStatus
        case 6: return .lock
        case 7: return .unlock(passcode: try secret(&reader))
        case 8: return .setPasscode(current: try reader.optional(secret), new: try secret(&reader))
        case 9: return .removePasscode(current: try secret(&reader))
        case 10: return .erase(passcode: try reader.optional(secret))
        case 11: return .countItems(accessibility: try reader.optional { (reader: inout WireReader) throws(WireError) in try WireValues.token(&reader, Accessibility.self) })
        case 12: return .setEraseAfterFailedAttempts(try reader.bool(), passcode: try secret(&reader))
        case 13: return .verifyPasscode(try secret(&reader), context: try WireValues.contextID(&reader))
        case 14: return .biometryStatus
        case 15: return .awaitBiometricMatch(timeout: try reader.double(), context: try WireValues.contextID(&reader))
        case 16: return .endBiometricMatch
        case 17: return .invalidateContext(try WireValues.contextID(&reader))
        case 18: return .enrollFinger(name: try reader.string(max: WireValues.maximumToken), passcode: try secret(&reader))
        case 19: return .removeFinger(name: try reader.string(max: WireValues.maximumToken), passcode: try secret(&reader))
        case 20: return .setSimulatedSensor(try reader.bool(), passcode: try secret(&reader))
        case 21: return .simulateTouch(matching: try reader.bool(), finger: try reader.optional { (reader: inout WireReader) throws(WireError) in try reader.string(max: WireValues.maximumToken) })
        case 22: return .daemonStatus
        case 23: return .openOwnerSession(passcode: try secret(&reader))
        case 24: return .closeOwnerSession
        case 25:
            return .setEntitlement(
                app: try reader.string(max: KeychainLimits.maximumAttributeSize), group: try reader.string(max: KeychainLimits.maximumAttributeSize),
                granted: try reader.bool())
        case 26: return .listEntitlements
        case 27: return .eraseUnopenableKeychain
        case 28: return .openOwnerSessionByBiometry(timeout: try reader.double())
        case 29: return .identify
        case 30: return .beginImport
        case 31:
            return .importChunk(
                file: try reader.string(max: WireValues.maximumToken), offset: try reader.int(in: 0...(1 << 40)),
                bytes: try reader.secret(max: KeychainRequest.maximumImportChunk))
        case 32: return .finishImport(passcode: try reader.optional(secret))
        case 33:
            return .declareApp(
                executable: try reader.string(max: KeychainLimits.maximumAttributeSize), declaration: try reader.optional(WireValues.appDeclaration))
        case 34: return .listDeclaredApps
        case 35:
            return .createEnclaveKey(
                accessibility: try WireValues.token(&reader, Accessibility.self), accessControl: try reader.optional(WireValues.accessControl))
        case 36: return .useEnclaveKey(try WireValues.enclaveKeyUse(&reader))
        case let tag: throw WireError("an unknown request (tag \(tag))")
        }
    }

    private static func write(_ request: KeychainRequest, to writer: inout WireWriter) {
        switch request {
        case .add(let item): writer.u8(1); WireValues.write(item, to: &writer)
        case .copyMatching(let query): writer.u8(2); WireValues.write(query, to: &writer)
        case .update(let query, let changes): writer.u8(3); WireValues.write(query, to: &writer); WireValues.write(changes, to: &writer)
        case .delete(let query): writer.u8(4); WireValues.write(query, to: &writer)
        case .deviceStatus: writer.u8(5)
        case .lock: writer.u8(6)
        case .unlock(let passcode): writer.u8(7); writer.secret(passcode)
        case .setPasscode(let current, let new): writer.u8(8); writer.optional(current) { $0.secret($1) }; writer.secret(new)
        case .removePasscode(let current): writer.u8(9); writer.secret(current)
        case .erase(let passcode): writer.u8(10); writer.optional(passcode) { $0.secret($1) }
        case .countItems(let accessibility): writer.u8(11); writer.optional(accessibility) { $0.string($1.rawValue) }
        case .setEraseAfterFailedAttempts(let enabled, let passcode): writer.u8(12); writer.bool(enabled); writer.secret(passcode)
        case .verifyPasscode(let passcode, let context): writer.u8(13); writer.secret(passcode); writer.data(context.bytes)
        case .biometryStatus: writer.u8(14)
        case .awaitBiometricMatch(let timeout, let context): writer.u8(15); writer.double(timeout); writer.data(context.bytes)
        case .endBiometricMatch: writer.u8(16)
        case .invalidateContext(let context): writer.u8(17); writer.data(context.bytes)
        case .enrollFinger(let name, let passcode): writer.u8(18); writer.string(name); writer.secret(passcode)
        case .removeFinger(let name, let passcode): writer.u8(19); writer.string(name); writer.secret(passcode)
        case .setSimulatedSensor(let enabled, let passcode): writer.u8(20); writer.bool(enabled); writer.secret(passcode)
        case .simulateTouch(let matching, let finger): writer.u8(21); writer.bool(matching); writer.optional(finger) { $0.string($1) }
        case .daemonStatus: writer.u8(22)
        case .openOwnerSession(let passcode): writer.u8(23); writer.secret(passcode)
        case .closeOwnerSession: writer.u8(24)
        case .setEntitlement(let app, let group, let granted): writer.u8(25); writer.string(app); writer.string(group); writer.bool(granted)
        case .listEntitlements: writer.u8(26)
        case .eraseUnopenableKeychain: writer.u8(27)
        case .openOwnerSessionByBiometry(let timeout): writer.u8(28); writer.double(timeout)
        case .identify: writer.u8(29)
        case .beginImport: writer.u8(30)
        case .importChunk(let file, let offset, let bytes): writer.u8(31); writer.string(file); writer.int(offset); writer.secret(bytes)
        case .finishImport(let passcode): writer.u8(32); writer.optional(passcode) { $0.secret($1) }
        case .declareApp(let executable, let declaration):
            writer.u8(33); writer.string(executable); writer.optional(declaration) { WireValues.write($1, to: &$0) }
        case .listDeclaredApps: writer.u8(34)
        case .createEnclaveKey(let accessibility, let accessControl):
            writer.u8(35); writer.string(accessibility.rawValue); writer.optional(accessControl) { WireValues.write($1, to: &$0) }
        case .useEnclaveKey(let use): writer.u8(36); WireValues.write(use, to: &writer)
        }
    }
}
