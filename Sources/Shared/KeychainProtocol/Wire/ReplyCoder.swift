import Foundation

/// The one place where bytes from the daemon become a reply (or an error), and back.
///
/// A reply body is the version byte, then 0 and a ``KeychainReply``, or 1 and a
/// ``KeychainError``.
public enum ReplyCoder {
    /// Parses one reply body.
    ///
    /// - Throws: ``WireError`` when the bytes are not a reply of this version.
    public static func decode(_ body: [UInt8]) throws(WireError) -> Result<KeychainReply, KeychainError> {
        var reader = WireReader(body)
        try WireFrame.readVersion(&reader)
        let result: Result<KeychainReply, KeychainError>
        switch try reader.u8() {
        case 0: result = .success(try read(&reader))
        case 1: result = .failure(try error(&reader))
        default: throw WireError("a reply that is neither a result nor an error")
        }
        try reader.finish()
        return result
    }

    /// The body of `result`. It may hold a secret: wipe it once sent.
    public static func encode(_ result: Result<KeychainReply, KeychainError>) -> [UInt8] {
        var writer = WireWriter()
        writer.u8(WireFrame.version)
        switch result {
        case .success(let reply): writer.u8(0); write(reply, to: &writer)
        case .failure(let error):
            writer.u8(1)
            writer.i64(Int64(error.status))
            // Within the reader's limit: a longer message is cut after its last whole scalar that
            // fits (rebuilding every message scalar by scalar was a fifth of keychaind's work to
            // answer a miss).
            writer.string(
                error.message.utf8.count <= WireValues.maximumMessage
                    ? error.message : Self.cut(error.message, toUTF8Bytes: WireValues.maximumMessage))
            writer.optional(error.requiredAuthentication) { WireValues.write($1, to: &$0) }
        }
        return writer.finish()
    }

    /// The longest start of `message` whose UTF-8 form has at most `limit` bytes.
    static func cut(_ message: String, toUTF8Bytes limit: Int) -> String {
        var end = message.startIndex
        var bytes = 0
        for scalar in message.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= limit else { break }
            message.unicodeScalars.formIndex(after: &end)
        }
        return String(message.unicodeScalars[..<end])
    }

    private static func error(_ reader: inout WireReader) throws(WireError) -> KeychainError {
        let status = try reader.int(in: Int(Int32.min)...Int(Int32.max))
        let message = try reader.string(max: WireValues.maximumMessage)
        let required = try reader.optional(WireValues.accessControl)
        return KeychainError(status: Int32(status), message: message, requiredAuthentication: required)
    }

    private static func read(_ reader: inout WireReader) throws(WireError) -> KeychainReply {
        let tag = try reader.u8()
        switch tag {
        case 1: return .done
        case 2: return .items(try reader.array(max: WireValues.maximumItems, item))
        case 3: return .status(try deviceStatus(&reader))
        case 4:
            return .biometry(
                BiometryStatus(
                    sensor: try WireValues.token(&reader, SensorKind.self),
                    enrolledFingers: try reader.array(max: WireValues.maximumFingers) {
                        (reader: inout WireReader) throws(WireError) in try reader.string(max: WireValues.maximumToken)
                    },
                    isLockedOut: try reader.bool(), passcodeRequired: try reader.bool(),
                    consecutiveFailures: try reader.int(in: 0...Int(Int32.max)),
                    domainState: try reader.optional { (reader: inout WireReader) throws(WireError) in
                        try reader.data(max: WireValues.maximumReference)
                    },
                    passcodeSet: try reader.bool()))
        case 5:
            switch try reader.u8() {
            case 0: return .match(.noTouch)
            case 1: return .match(.matched)
            case 2: return .match(.notMatched)
            default: throw WireError("an unknown match")
            }
        case 6: return .count(try reader.int(in: 0...Int.max))
        case 7:
            return .daemon(
                DaemonStatus(
                    mode: try reader.string(max: WireValues.maximumToken),
                    pid: Int32(try reader.int(in: 0...Int(Int32.max))),
                    uptime: try reader.double(), connectedClients: try reader.int(in: 0...Int(Int32.max)),
                    idleLockSeconds: try reader.double(), device: try deviceStatus(&reader),
                    sheets: try reader.string(max: WireValues.maximumMessage)))
        case 8:
            let entries = try reader.array(max: WireValues.maximumItems) {
                (reader: inout WireReader) throws(WireError) in
                (
                    try reader.string(max: KeychainLimits.maximumAttributeSize),
                    try reader.array(max: WireValues.maximumItems) { (reader: inout WireReader) throws(WireError) in
                        try reader.string(max: KeychainLimits.maximumAttributeSize)
                    }
                )
            }
            return .entitlements(Dictionary(entries, uniquingKeysWith: { first, _ in first }))
        case 9:
            let entries = try reader.array(max: WireValues.maximumItems) {
                (reader: inout WireReader) throws(WireError) in
                (try reader.string(max: KeychainLimits.maximumAttributeSize), try WireValues.appDeclaration(&reader))
            }
            return .declaredApps(Dictionary(entries, uniquingKeysWith: { first, _ in first }))
        case 10:
            return .enclaveKey(
                sealedKey: try reader.data(max: EnclaveKeyUse.maximumSealedKey),
                publicKey: try reader.data(max: EnclaveKeyOperation.publicKeySize))
        case 11: return .keyOutput(try reader.secret(max: WireValues.maximumReference))
        case 12:
            let tag = try reader.u8()
            guard let failure = OwnerAuthenticationFailure(rawValue: tag) else {
                throw WireError("an unknown authentication failure (tag \(tag))")
            }
            return .authenticationFailed(failure, message: try reader.string(max: WireValues.maximumMessage))
        case 13, 19:
            return .secretItemMatches(
                try reader.array(max: WireValues.maximumItems) { (reader: inout WireReader) throws(WireError) in
                    SecretItemMatch(
                        service: try reader.string(max: KeychainLimits.maximumAttributeSize),
                        account: try reader.string(max: KeychainLimits.maximumAttributeSize),
                        readable: try reader.bool(),
                        label: try reader.optional { (reader: inout WireReader) throws(WireError) in
                            try reader.string(max: KeychainLimits.maximumAttributeSize)
                        },
                        contentType: tag == 13
                            ? nil
                            : try reader.optional { (reader: inout WireReader) throws(WireError) in
                                try reader.string(max: KeychainLimits.maximumAttributeSize)
                            })
                })
        case 14:
            let bytes = try reader.data(max: WireFrame.maximumReply)
            let done = try reader.int(in: 0...Int(Int32.max))
            let total = try reader.int(in: 0...Int(Int32.max))
            let summary = try reader.optional { (reader: inout WireReader) throws(WireError) in
                BackupSummary(
                    migratable: try reader.int(in: 0...Int(Int32.max)),
                    thisDeviceOnly: try reader.int(in: 0...Int(Int32.max)),
                    leftOut: try reader.int(in: 0...Int(Int32.max)))
            }
            return .backupPart(BackupPart(bytes: bytes, done: done, total: total, summary: summary))
        case 15:
            return .restored(
                RestoreReport(
                    added: try reader.int(in: 0...Int(Int32.max)), replaced: try reader.int(in: 0...Int(Int32.max)),
                    kept: try reader.int(in: 0...Int(Int32.max)),
                    fromAnotherDevice: try reader.int(in: 0...Int(Int32.max))))
        case 17:
            return .sync(try SyncCoding.report(&reader))
        case 18:
            return .actingFor(app: try reader.string(max: WireValues.maximumMessage))
        case 16:
            return .keychainProtection(
                KeychainProtection(
                    sealedBy: try reader.optional { (reader: inout WireReader) throws(WireError) in
                        try reader.string(max: WireValues.maximumMessage)
                    },
                    counterIndex: try reader.optional { (reader: inout WireReader) throws(WireError) in
                        try reader.u32()
                    },
                    counterValue: try reader.optional { (reader: inout WireReader) throws(WireError) in
                        try reader.u64()
                    }))
        default: throw WireError("an unknown reply (tag \(tag))")
        }
    }

    private static func deviceStatus(_ reader: inout WireReader) throws(WireError) -> DeviceStatus {
        let classes = try reader.array(max: ProtectionClass.allCases.count) {
            (reader: inout WireReader) throws(WireError) in
            try WireValues.token(&reader, ProtectionClass.self)
        }
        return DeviceStatus(
            passcodeSet: try reader.bool(), unlockedClasses: Set(classes),
            failedAttempts: try reader.int(in: 0...Int(Int32.max)),
            secondsUntilNextAttempt: try reader.double(), eraseAfterFailedAttempts: try reader.bool(),
            syncStopped: try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: 16_384)
            })
    }

    private static func write(_ status: DeviceStatus, to writer: inout WireWriter) {
        writer.array(status.unlockedClasses.map(\.rawValue).sorted()) { $0.string($1) }
        writer.bool(status.passcodeSet)
        writer.int(status.failedAttempts)
        writer.double(status.secondsUntilNextAttempt)
        writer.bool(status.eraseAfterFailedAttempts)
        writer.optional(status.syncStopped) { $0.string($1) }
    }

    private static func item(_ reader: inout WireReader) throws(WireError) -> ItemResult {
        var item = ItemResult(itemClass: try WireValues.token(&reader, ItemClass.self))
        item.attributes = try reader.optional(WireValues.attributes)
        item.secret = try reader.optional(WireValues.secret)
        item.persistentRef = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.data(max: WireValues.maximumReference)
        }
        item.accessControl = try reader.optional(WireValues.accessControl)
        return item
    }

    private static func write(_ reply: KeychainReply, to writer: inout WireWriter) {
        switch reply {
        case .done: writer.u8(1)
        case .items(let items):
            writer.u8(2)
            writer.array(items) { writer, item in
                writer.string(item.itemClass.rawValue)
                writer.optional(item.attributes) { WireValues.write($1, to: &$0) }
                writer.optional(item.secret) { $0.secret($1) }
                writer.optional(item.persistentRef) { $0.data($1) }
                writer.optional(item.accessControl) { WireValues.write($1, to: &$0) }
            }
        case .status(let status):
            writer.u8(3)
            write(status, to: &writer)
        case .biometry(let status):
            writer.u8(4)
            writer.string(status.sensor.rawValue)
            writer.array(status.enrolledFingers) { $0.string($1) }
            writer.bool(status.isLockedOut)
            writer.bool(status.passcodeRequired)
            writer.int(status.consecutiveFailures)
            writer.optional(status.domainState) { $0.data($1) }
            writer.bool(status.passcodeSet)
        case .match(let match):
            writer.u8(5)
            switch match {
            case .noTouch: writer.u8(0)
            case .matched: writer.u8(1)
            case .notMatched: writer.u8(2)
            }
        case .count(let count): writer.u8(6); writer.int(count)
        case .entitlements(let entitlements):
            writer.u8(8)
            writer.array(entitlements.sorted { $0.key < $1.key }) { writer, entry in
                writer.string(entry.key)
                writer.array(entry.value) { $0.string($1) }
            }
        case .declaredApps(let apps):
            writer.u8(9)
            writer.array(apps.sorted { $0.key < $1.key }) { writer, entry in
                writer.string(entry.key)
                WireValues.write(entry.value, to: &writer)
            }
        case .daemon(let status):
            writer.u8(7)
            writer.string(status.mode)
            writer.int(Int(status.pid))
            writer.double(status.uptime)
            writer.int(status.connectedClients)
            writer.double(status.idleLockSeconds)
            write(status.device, to: &writer)
            writer.string(status.sheets)
        case .enclaveKey(let sealedKey, let publicKey): writer.u8(10); writer.data(sealedKey); writer.data(publicKey)
        case .keyOutput(let bytes): writer.u8(11); writer.secret(bytes)
        case .authenticationFailed(let failure, let message):
            writer.u8(12); writer.u8(failure.rawValue)
            writer.string(Self.cut(message, toUTF8Bytes: WireValues.maximumMessage))
        case .secretItemMatches(let matches):
            // Tag 13 is the matches as every keychaind sends them; 19, with content types, only
            // answers a request for them, which a bridge that reads 19 alone sends.
            let withContentTypes = matches.contains { $0.contentType != nil }
            writer.u8(withContentTypes ? 19 : 13)
            writer.array(matches) { writer, match in
                writer.string(match.service)
                writer.string(match.account)
                writer.bool(match.readable)
                writer.optional(match.label) { writer, label in writer.string(label) }
                if withContentTypes {
                    writer.optional(match.contentType) { writer, contentType in writer.string(contentType) }
                }
            }
        case .backupPart(let part):
            writer.u8(14)
            writer.data(part.bytes)
            writer.int(part.done)
            writer.int(part.total)
            writer.optional(part.summary) { writer, summary in
                writer.int(summary.migratable)
                writer.int(summary.thisDeviceOnly)
                writer.int(summary.leftOut)
            }
        case .restored(let report):
            writer.u8(15)
            writer.int(report.added)
            writer.int(report.replaced)
            writer.int(report.kept)
            writer.int(report.fromAnotherDevice)
        case .sync(let report):
            writer.u8(17)
            SyncCoding.write(report, to: &writer)
        case .actingFor(let app):
            writer.u8(18)
            writer.string(app)
        case .keychainProtection(let protection):
            writer.u8(16)
            writer.optional(protection.sealedBy) { $0.string($1) }
            writer.optional(protection.counterIndex) { $0.u32($1) }
            writer.optional(protection.counterValue) { $0.u64($1) }
        }
    }
}
