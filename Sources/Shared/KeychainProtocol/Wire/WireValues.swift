import Foundation

/// The wire form of the values requests and replies carry. Every reader checks its limits
/// (``KeychainLimits``) so that nothing larger than the keychain accepts is ever allocated.
enum WireValues {
    /// The longest attribute name, class name or other short token.
    static let maximumToken = 64
    /// The longest message text in an error.
    static let maximumMessage = 4096
    /// The most items one reply carries.
    static let maximumItems = 100_000
    /// The most fingers a status lists.
    static let maximumFingers = 64
    /// The longest persistent reference, domain state or finger name.
    static let maximumReference = 1024

    static func token<Value: RawRepresentable>(
        _ reader: inout WireReader, _ type: Value.Type
    ) throws(WireError) -> Value where Value.RawValue == String {
        let raw = try reader.string(max: maximumToken)
        guard let value = Value(rawValue: raw) else { throw WireError("an unknown \(Value.self)") }
        return value
    }

    static func write(_ value: AttributeValue, to writer: inout WireWriter) {
        switch value {
        case .string(let text): writer.u8(1); writer.string(text)
        case .data(let data): writer.u8(2); writer.data(data)
        case .number(let number): writer.u8(3); writer.i64(number)
        case .bool(let flag): writer.u8(4); writer.bool(flag)
        case .date(let date): writer.u8(5); writer.double(date.timeIntervalSinceReferenceDate)
        }
    }

    static func attributeValue(_ reader: inout WireReader) throws(WireError) -> AttributeValue {
        let limit = KeychainLimits.maximumAttributeSize
        switch try reader.u8() {
        case 1: return .string(try reader.string(max: limit))
        case 2: return .data(try reader.data(max: limit))
        case 3: return .number(try reader.i64())
        case 4: return .bool(try reader.bool())
        case 5: return .date(try reader.date(sinceReferenceDate: true))
        default: throw WireError("an unknown attribute value type")
        }
    }

    static func write(_ attributes: [String: AttributeValue], to writer: inout WireWriter) {
        writer.array(attributes.sorted { $0.key < $1.key }) { writer, entry in
            writer.string(entry.key)
            write(entry.value, to: &writer)
        }
    }

    static func attributes(_ reader: inout WireReader) throws(WireError) -> [String: AttributeValue] {
        // Straight into the dictionary, with no list of entries in between.
        let count = try reader.count(max: KeychainLimits.maximumAttributeCount)
        var attributes = [String: AttributeValue](minimumCapacity: count)
        for _ in 0..<count {
            let name = try reader.string(max: KeychainLimits.maximumAttributeName)
            guard attributes.updateValue(try attributeValue(&reader), forKey: name) == nil else {
                throw WireError("an attribute named twice")
            }
        }
        return attributes
    }

    static func write(_ control: AccessControl, to writer: inout WireWriter) {
        writer.string(control.protection.rawValue)
        writer.u64(UInt64(control.flags.rawValue))
    }

    /// An access control, checked by the same rules as `SecAccessControlCreateWithFlags`.
    static func accessControl(_ reader: inout WireReader) throws(WireError) -> AccessControl {
        let protection = try token(&reader, Accessibility.self)
        let flags = AccessControlFlags(rawValue: UInt(truncatingIfNeeded: try reader.u64()))
        do {
            return try AccessControl(protection: protection, flags: flags)
        } catch {
            throw WireError("an access control that breaks the rules: \(error.message)")
        }
    }

    static func secret(_ reader: inout WireReader) throws(WireError) -> SecretBytes {
        try reader.secret(max: KeychainLimits.maximumSecretSize)
    }

    static func write(_ item: NewItem, to writer: inout WireWriter) {
        writer.string(item.itemClass.rawValue)
        write(item.attributes, to: &writer)
        writer.optional(item.accessGroup) { $0.string($1) }
        writer.optional(item.accessibility) { $0.string($1.rawValue) }
        writer.bool(item.synchronizable)
        writer.optional(item.secret) { $0.secret($1) }
        writer.int(item.returns.rawValue)
        writer.optional(item.accessControl) { write($1, to: &$0) }
        writer.optional(item.applicationPassword) { $0.secret($1) }
        writer.optional(item.keptDates) {
            $0.double($1.created.timeIntervalSince1970)
            $0.double($1.modified.timeIntervalSince1970)
        }
    }

    static func accessGroup(_ reader: inout WireReader) throws(WireError) -> String {
        try reader.string(max: KeychainLimits.maximumAttributeSize)
    }

    static func accessibility(_ reader: inout WireReader) throws(WireError) -> Accessibility {
        try token(&reader, Accessibility.self)
    }

    static func newItem(_ reader: inout WireReader) throws(WireError) -> NewItem {
        var item = NewItem(itemClass: try token(&reader, ItemClass.self))
        item.attributes = try attributes(&reader)
        item.accessGroup = try reader.optional(accessGroup)
        item.accessibility = try reader.optional(accessibility)
        item.synchronizable = try reader.bool()
        item.secret = try reader.optional(secret)
        item.returns = try returnSelection(&reader)
        item.accessControl = try reader.optional(accessControl)
        item.applicationPassword = try reader.optional(secret)
        item.keptDates = try reader.optional { (reader: inout WireReader) throws(WireError) in
            KeptDates(
                created: try reader.date(),
                modified: try reader.date())
        }
        return item
    }

    static func returnSelection(_ reader: inout WireReader) throws(WireError) -> ReturnSelection {
        let known: ReturnSelection = [.data, .attributes, .persistentRef]
        let selection = ReturnSelection(rawValue: try reader.int(in: 0...known.rawValue))
        return selection
    }

    static func write(_ query: ItemQuery, to writer: inout WireWriter) {
        writer.string(query.itemClass.rawValue)
        write(query.attributes, to: &writer)
        writer.optional(query.accessGroup) { $0.string($1) }
        writer.optional(query.accessibility) { $0.string($1.rawValue) }
        switch query.synchronizable {
        case .no: writer.u8(0)
        case .yes: writer.u8(1)
        case .any: writer.u8(2)
        }
        writer.optional(query.persistentRef) { $0.data($1) }
        switch query.limit {
        case .one: writer.u8(0)
        case .all: writer.u8(1)
        case .count(let count): writer.u8(2); writer.int(count)
        }
        writer.int(query.returns.rawValue)
        writer.optional(query.authenticationContext) { $0.data($1.bytes) }
        writer.optional(query.applicationPassword) { $0.secret($1) }
        writer.u8((query.skipsItemsNeedingAuthentication ? 1 : 0) | (query.matchesCaseInsensitively ? 2 : 0))
        writer.optional(query.itemList) { writer, list in writer.array(list) { $0.data($1) } }
    }

    static func query(_ reader: inout WireReader) throws(WireError) -> ItemQuery {
        var query = ItemQuery(itemClass: try token(&reader, ItemClass.self))
        query.attributes = try attributes(&reader)
        query.accessGroup = try reader.optional(accessGroup)
        query.accessibility = try reader.optional(accessibility)
        switch try reader.u8() {
        case 0: query.synchronizable = .no
        case 1: query.synchronizable = .yes
        case 2: query.synchronizable = .any
        default: throw WireError("an unknown synchronizable match")
        }
        query.persistentRef = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.data(max: maximumReference)
        }
        switch try reader.u8() {
        case 0: query.limit = .one
        case 1: query.limit = .all
        case 2: query.limit = .count(try reader.int(in: 1...Int(Int32.max)))
        default: throw WireError("an unknown match limit")
        }
        query.returns = try returnSelection(&reader)
        query.authenticationContext = try reader.optional(contextID)
        query.applicationPassword = try reader.optional(secret)
        let options = try reader.u8()
        guard options & ~3 == 0 else { throw WireError("an unknown query option") }
        query.skipsItemsNeedingAuthentication = options & 1 != 0
        query.matchesCaseInsensitively = options & 2 != 0
        query.itemList = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.array(max: KeychainLimits.maximumItemList) { (reader: inout WireReader) throws(WireError) in
                try reader.data(max: maximumReference)
            }
        }
        return query
    }

    static func write(_ use: EnclaveKeyUse, to writer: inout WireWriter) {
        writer.data(use.sealedKey)
        switch use.operation {
        case .sign(let digest): writer.u8(0); writer.data(digest)
        case .keyAgreement(let peer): writer.u8(1); writer.data(peer)
        }
        writer.optional(use.authenticationContext) { $0.data($1.bytes) }
    }

    static func enclaveKeyUse(_ reader: inout WireReader) throws(WireError) -> EnclaveKeyUse {
        let sealedKey = try reader.data(max: EnclaveKeyUse.maximumSealedKey)
        let operation: EnclaveKeyOperation
        switch try reader.u8() {
        case 0: operation = .sign(digest: try reader.data(max: EnclaveKeyOperation.maximumDigest))
        case 1: operation = .keyAgreement(peerPublicKey: try reader.data(max: EnclaveKeyOperation.publicKeySize))
        case let tag: throw WireError("an unknown Enclave key operation (tag \(tag))")
        }
        return EnclaveKeyUse(
            sealedKey: sealedKey, operation: operation, authenticationContext: try reader.optional(contextID))
    }

    static func write(_ authentication: OwnerAuthentication, to writer: inout WireWriter) {
        writer.u8(authentication.factors.rawValue)
        writer.string(authentication.reason)
        writer.string(authentication.cancelTitle)
        writer.optional(authentication.fallbackTitle) { $0.string($1) }
        writer.data(authentication.context.bytes)
        writer.optional(authentication.terminal) { $0.string($1) }
    }

    static func ownerAuthentication(_ reader: inout WireReader) throws(WireError) -> OwnerAuthentication {
        let tag = try reader.u8()
        guard let factors = OwnerAuthentication.Factors(rawValue: tag) else {
            throw WireError("unknown authentication factors (tag \(tag))")
        }
        let title = { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: OwnerAuthentication.maximumTitle)
        }
        return OwnerAuthentication(
            factors: factors, reason: try reader.string(max: OwnerAuthentication.maximumReason),
            cancelTitle: try title(&reader), fallbackTitle: try reader.optional(title),
            context: try contextID(&reader),
            terminal: try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: maximumToken)
            })
    }

    static func contextID(_ reader: inout WireReader) throws(WireError) -> AuthenticationContextID {
        guard let id = AuthenticationContextID(bytes: try reader.data(max: 16)) else {
            throw WireError("a context name that is not 16 bytes")
        }
        return id
    }

    static func write(_ declaration: AppDeclaration, to writer: inout WireWriter) {
        writer.string(declaration.applicationIdentifier)
        writer.array(declaration.keychainAccessGroups) { $0.string($1) }
        writer.array(declaration.applicationGroups) { $0.string($1) }
    }

    static func appDeclaration(_ reader: inout WireReader) throws(WireError) -> AppDeclaration {
        func groups(_ reader: inout WireReader) throws(WireError) -> [String] {
            try reader.array(max: AppDeclaration.maximumGroups) { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: KeychainLimits.maximumAttributeSize)
            }
        }
        return AppDeclaration(
            applicationIdentifier: try reader.string(max: KeychainLimits.maximumAttributeSize),
            keychainAccessGroups: try groups(&reader), applicationGroups: try groups(&reader))
    }

    static func write(_ changes: ItemChanges, to writer: inout WireWriter) {
        write(changes.attributes, to: &writer)
        writer.optional(changes.accessGroup) { $0.string($1) }
        writer.optional(changes.accessibility) { $0.string($1.rawValue) }
        writer.optional(changes.synchronizable) { $0.bool($1) }
        writer.optional(changes.secret) { $0.secret($1) }
        writer.optional(changes.accessControl) { write($1, to: &$0) }
        writer.bool(changes.replacesSecretServiceAttributes)
    }

    static func changes(_ reader: inout WireReader) throws(WireError) -> ItemChanges {
        var changes = ItemChanges(attributes: try attributes(&reader))
        changes.accessGroup = try reader.optional(accessGroup)
        changes.accessibility = try reader.optional(accessibility)
        changes.synchronizable = try reader.optional { (reader: inout WireReader) throws(WireError) in try reader.bool()
        }
        changes.secret = try reader.optional(secret)
        changes.accessControl = try reader.optional(accessControl)
        changes.replacesSecretServiceAttributes = try reader.bool()
        return changes
    }
}
