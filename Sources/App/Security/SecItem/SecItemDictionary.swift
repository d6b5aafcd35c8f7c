import Foundation
import KeychainProtocol
import LocalAuthentication

/// Parses the dictionaries of the SecItem functions into typed requests, in one place, before
/// anything acts on them. Wrong types, unknown keys, unknown classes and keys that do not
/// belong in a call give Apple's codes; nothing here crashes on bad input.
///
/// Keys and values come as the caller built them: Swift values from a `[String: Any]`, or
/// Foundation objects (`NSString`, `NSNumber`, `NSData`, `NSDate`) from an `NSDictionary` or a
/// `[String: AnyObject]`; both read the same.
struct SecItemDictionary {
    /// The option keys the dictionary holds and the call has not taken yet, one bit each
    /// (``SecItemOptionKey/rawValue``), and their values (a few: the list is searched).
    private var optionsLeft: UInt64 = 0
    private var optionValues: [(key: SecItemOptionKey, value: Any)] = []
    /// Every other entry: attributes, and keys nothing takes (refused at the end).
    private var entries: [String: Any]
    /// The call's authentication options, parsed with the item or query.
    private(set) var authentication = AuthenticationOptions()
    /// What the caller asked to have returned (``takeReturns(of:)``); the request may ask the
    /// server for more (a certificate's reference is made from its data).
    private(set) var requested = ResultShape.Request()

    /// - Throws: `errSecParam` for a key that is not a string.
    init(_ dictionary: CFDictionary) throws(KeychainError) {
        // enumerateKeysAndObjects, not for-in: NSDictionary's iterator looks each key up again
        // (a third more instructions for a usual query).
        var entries = [String: Any](minimumCapacity: dictionary.count)
        var optionsLeft: UInt64 = 0
        var optionValues: [(key: SecItemOptionKey, value: Any)] = []
        var keyNotAString: Any?
        dictionary.enumerateKeysAndObjects { key, value, stop in
            guard let name = key as? String else {
                keyNotAString = key
                stop.pointee = true
                return
            }
            if let option = SecItemOptionKey.byName[name] {
                optionsLeft |= 1 << option.rawValue
                optionValues.append((option, value))
            } else {
                entries[name] = value
            }
        }
        if let keyNotAString {
            throw KeychainError(
                .errSecParam,
                "a dictionary key is not a string (\(type(of: keyNotAString))); keys are kSec… constants")
        }
        self.entries = entries
        self.optionsLeft = optionsLeft
        self.optionValues = optionValues
    }

    /// Whether the dictionary is about identities (``IdentityItems`` handles them): its class,
    /// or an identity as `kSecValueRef`.
    var namesIdentity: Bool {
        self[.itemClass] as? String == kSecClassIdentity as String || self[.valueRef] is SecIdentity
    }

    // MARK: Calls

    /// A `SecItemAdd` dictionary.
    mutating func newItem() throws(KeychainError) -> NewItem {
        let itemClass = try takeClass()
        var item = NewItem(itemClass: itemClass)
        item.returns = try takeReturns(of: itemClass)
        item.accessGroup = try takeString(.accessGroup)
        item.accessibility = try takeAccessibility()
        item.synchronizable = try takeBool(.synchronizable) ?? false
        item.secret = try takeData(.valueData).map { SecretBytes($0) }
        let reference = try takeReference(of: itemClass, data: item.secret)
        if itemClass == .certificate && reference == nil {
            throw KeychainError(
                .errSecParam,
                "a certificate item holds a certificate: give kSecValueRef (a SecCertificate) or kSecValueData "
                    + "(its DER)"
            )
        }
        item.accessControl = try takeAccessControl()
        authentication = try takeAuthenticationOptions()
        try refuse(SecItemOptionKey.unsupportedSearch, in: "SecItemAdd", code: .errSecUnimplemented)
        try refuse(SecItemOptionKey.search, in: "SecItemAdd")
        item.attributes = try takeAttributes(of: itemClass)
        switch reference {
        case .certificate(let certificate):
            // The certificate's data and what it says; only the label is the caller's to choose.
            item.secret = SecretBytes(certificate.der)
            for (name, value) in certificate.itemAttributes
            where name != kSecAttrLabel as String || item.attributes[name] == nil {
                item.attributes[name] = value
            }
        case .key(let key):
            // The key's external representation and what it is; its class, type and size are
            // the key's, the rest (label, tag, application label, uses) the caller's to choose.
            item.secret = SecretBytes(key.itemData)
            let derived = Set(
                [kSecAttrKeyClass, kSecAttrKeyType, kSecAttrKeySizeInBits, kSecAttrEffectiveKeySize].map {
                    $0 as String
                })
            for (name, value) in key.itemAttributes where derived.contains(name) || item.attributes[name] == nil {
                item.attributes[name] = value
            }
        case nil:
            break
        }
        return item
    }

    /// What a query is for, which decides what it may carry besides a search.
    enum QueryUse {
        /// `SecItemCopyMatching`: return keys choose the result.
        case search
        /// `SecItemUpdate`. As on iOS, return keys are refused (`errSecParam`: Apple, "the query
        /// dictionary for update can't contain item return result keys, because SecItemUpdate
        /// only returns a status"), and `kSecValueData` is not a search key: it is left out of
        /// the match, so a wrapper that passes its whole add dictionary as the query updates the
        /// item, or gets `errSecItemNotFound` and adds it. `kSecValueRef` and
        /// `kSecValuePersistentRef` name the item, as in a search.
        case update
        /// `SecItemDelete`: return keys are ignored.
        case delete
    }

    /// A `SecItemCopyMatching`, `SecItemUpdate` or `SecItemDelete` query.
    mutating func query(for use: QueryUse = .search) throws(KeychainError) -> ItemQuery {
        let itemClass = try takeClass(orFromReference: true)
        var query = ItemQuery(itemClass: itemClass)
        switch use {
        case .search:
            query.returns = try takeReturns(of: itemClass)
        case .update:
            for key in SecItemOptionKey.returns where try takeBool(key) == true {
                throw KeychainError(
                    .errSecParam, "an update's query asks for no result (\(key)): SecItemUpdate returns only a status")
            }
            _ = try takeData(.valueData)
        case .delete:
            _ = try takeReturns(of: itemClass)
        }
        query.limit = try takeLimit()
        query.accessGroup = try takeString(.accessGroup)
        query.accessibility = try takeAccessibility()
        let synchronizable = try takeSynchronizableMatch()
        query.persistentRef = try takeData(.valuePersistentRef)
        query.itemList = try takeItemList()
        // A persistent reference names one item whatever its synchronizable flag, as on iOS: a
        // query by references alone matches both (kSecAttrSynchronizable still narrows it).
        let byReference = query.persistentRef != nil || query.itemList != nil
        query.synchronizable = synchronizable ?? (byReference ? .any : .no)
        let reference = try takeReference(of: itemClass, data: nil)
        authentication = try takeAuthenticationOptions()
        query.skipsItemsNeedingAuthentication = authentication.interface == .skip
        query.matchesCaseInsensitively = try takeBool(.matchCaseInsensitive) ?? false
        // An access control in a query (a wrapper's delete often keeps it) is accepted, checked
        // and does not narrow the match, as on iOS, where it is not a search attribute
        // (UNCONFIRMED whether iOS narrows: no class's primary key holds it, so a query by the
        // primary key finds the same item either way).
        _ = try takeAccessControl()
        try refuse(SecItemOptionKey.unsupportedSearch, in: "a query", code: .errSecUnimplemented)
        query.attributes = try takeAttributes(of: itemClass)
        // kSecValueRef: the item that holds this certificate or key, named by what identifies it.
        if let reference {
            query.attributes.merge(reference.identifyingAttributes) { _, fromReference in fromReference }
        }
        return query
    }

    /// A `SecItemUpdate` attributes-to-update dictionary (Apple: real item attributes only).
    mutating func changes(for itemClass: ItemClass) throws(KeychainError) -> ItemChanges {
        try refuse(
            SecItemOptionKey.search + SecItemOptionKey.returns + [.itemClass, .valuePersistentRef, .valueRef]
                + SecItemOptionKey.uses, in: "the attributes to update")
        var changes = ItemChanges()
        changes.accessGroup = try takeString(.accessGroup)
        changes.accessibility = try takeAccessibility()
        changes.synchronizable = try takeBool(.synchronizable)
        changes.secret = try takeData(.valueData).map { SecretBytes($0) }
        if itemClass == .certificate && changes.secret != nil {
            throw KeychainError(
                .errSecParam,
                "a certificate item's certificate does not change (its attributes come from it): delete the item "
                    + "and add the new certificate"
            )
        }
        changes.accessControl = try takeAccessControl()
        changes.attributes = try takeAttributes(of: itemClass)
        return changes
    }

    // MARK: Keys

    /// The value of `key`, left in place; nil once taken.
    private subscript(key: SecItemOptionKey) -> Any? {
        guard optionsLeft & 1 << key.rawValue != 0 else { return nil }
        return optionValues.first { $0.key == key }?.value
    }

    /// The value of `key`, taken out.
    private mutating func take(_ key: SecItemOptionKey) -> Any? {
        let value = self[key]
        optionsLeft &= ~(1 << key.rawValue)
        return value
    }

    /// - Parameter orFromReference: a query may leave the class out when it has a
    ///   `kSecValuePersistentRef` or a `kSecValueRef`, which name it (as on iOS); an add may for a
    ///   `kSecValueRef`.
    private mutating func takeClass(orFromReference: Bool = false) throws(KeychainError) -> ItemClass {
        guard let value = take(.itemClass) else {
            if self[.valueRef] is SecCertificate { return .certificate }
            if self[.valueRef] is SecKey { return .key }
            if orFromReference, let reference = self[.valuePersistentRef] as? Data {
                guard let itemClass = PersistentReference.itemClass(of: reference), itemClass.isImplemented else {
                    throw KeychainError(
                        .errSecParam, "kSecValuePersistentRef is not a persistent reference to an item of this keychain"
                    )
                }
                return itemClass
            }
            throw KeychainError(
                .errSecParam, "the dictionary has no kSecClass; every SecItem call names the item class")
        }
        guard let raw = value as? String else {
            throw KeychainError(.errSecParam, "kSecClass takes a kSecClass… constant")
        }
        guard let itemClass = ItemClass(rawValue: raw) else {
            throw KeychainError(.errSecNoSuchClass, "kSecClass is not one of the kSecClass… constants")
        }
        if !itemClass.isImplemented {
            throw KeychainError(
                .errSecUnimplemented,
                "items of class \(raw) are not supported yet; generic passwords, internet passwords, keys and "
                    + "certificates are"
            )
        }
        return itemClass
    }

    /// The `kSecReturn…` keys, as the server is asked for them. `kSecReturnRef` gives a
    /// certificate's `SecCertificate` and a key's `SecKey` (made from its data and, for a key,
    /// its class and type, which the server is asked for). Beside another return key of a
    /// password it is left out and the others returned, as iOS does (a password has no
    /// reference object; iOS's own `v_Ref` for one is not documented, so none is made up).
    /// Alone for a password it is not supported.
    private mutating func takeReturns(of itemClass: ItemClass) throws(KeychainError) -> ReturnSelection {
        var returns: ReturnSelection = []
        if try takeBool(.returnData) == true { returns.insert(.data) }
        if try takeBool(.returnAttributes) == true { returns.insert(.attributes) }
        if try takeBool(.returnPersistentRef) == true { returns.insert(.persistentRef) }
        requested = ResultShape.Request(returns: returns)
        guard try takeBool(.returnRef) == true else { return returns }
        switch itemClass {
        case .certificate:
            requested.reference = .certificate
            return returns.union(.data)
        case .key:
            requested.reference = .key
            return returns.union([.data, .attributes])
        case .genericPassword where !returns.isEmpty, .internetPassword where !returns.isEmpty:
            requested.reference = .leftOut
            return returns
        default:
            throw KeychainError(
                .errSecUnimplemented,
                "kSecReturnRef is not supported yet for this class; ask for kSecReturnPersistentRef, "
                    + "kSecReturnAttributes or kSecReturnData"
            )
        }
    }

    /// `kSecValueRef`: a `SecCertificate` for a certificate item, a `SecKey` for a key item (a
    /// `SecIdentity` is two items, which ``IdentityItems`` handles before). For a certificate added without one,
    /// `kSecValueData` must be the certificate's DER.
    private mutating func takeReference(
        of itemClass: ItemClass, data: SecretBytes?
    ) throws(KeychainError) -> ItemReference? {
        let value = take(.valueRef)
        let reference: ItemReference?
        switch value {
        case nil: reference = nil
        case let certificate as SecCertificate: reference = .certificate(certificate)
        case let key as SecKey: reference = .key(key)
        default: throw KeychainError(.errSecParam, "kSecValueRef takes a SecCertificate, a SecKey or a SecIdentity")
        }
        if let reference {
            guard reference.itemClass == itemClass else {
                throw KeychainError(
                    .errSecParam,
                    "kSecValueRef holds a \(reference.typeName), which only a \(reference.itemClass.rawValue) item "
                        + "holds"
                )
            }
            guard data == nil else {
                throw KeychainError(
                    .errSecParam, "give the item's \(reference.typeName) once: kSecValueRef or kSecValueData, not both")
            }
            return reference
        }
        guard itemClass == .certificate, let data else { return nil }
        // UNCONFIRMED whether iOS parses kSecValueData for a certificate; here it must be one.
        guard let certificate = data.withUnsafeBytes({ SecCertificate(der: Data($0)) }) else {
            throw KeychainError(
                .errSecParam, "kSecValueData of a certificate item is not a DER-encoded X.509 certificate")
        }
        return .certificate(certificate)
    }

    /// `kSecMatchItemList`: persistent references (`kSecReturnPersistentRef`'s data) the match
    /// must be among. Item objects in the list (a `SecCertificate`) are not supported yet.
    private mutating func takeItemList() throws(KeychainError) -> [Data]? {
        guard let value = take(.matchItemList) else { return nil }
        guard let list = value as? [Any] else {
            throw KeychainError(.errSecParam, "kSecMatchItemList takes an array of persistent references")
        }
        guard list.count <= KeychainLimits.maximumItemList else {
            throw KeychainError(
                .errSecParam, "kSecMatchItemList holds \(list.count) items; at most \(KeychainLimits.maximumItemList)")
        }
        var references: [Data] = []
        for element in list {
            guard let reference = element as? Data else {
                throw KeychainError(
                    .errSecUnimplemented,
                    "kSecMatchItemList holds persistent references (Data) here; item objects are not supported in "
                        + "it yet"
                )
            }
            references.append(reference)
        }
        return references
    }

    private mutating func takeLimit() throws(KeychainError) -> MatchLimit {
        guard let value = take(.matchLimit) else { return .one }
        if let raw = value as? String {
            switch raw {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: break
            }
        } else if let number = Self.integer(value), number > 0 {
            return number == 1 ? .one : .count(Int(clamping: number))
        }
        throw KeychainError(
            .errSecParam, "kSecMatchLimit takes kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
    }

    private mutating func takeAccessibility() throws(KeychainError) -> Accessibility? {
        guard let value = take(.accessible) else { return nil }
        guard let raw = value as? String, let accessibility = Accessibility(rawValue: raw) else {
            throw KeychainError(.errSecParam, "kSecAttrAccessible takes one of the kSecAttrAccessible… constants")
        }
        return accessibility
    }

    /// `kSecAttrSynchronizable` in a query; nil when absent.
    private mutating func takeSynchronizableMatch() throws(KeychainError) -> SynchronizableMatch? {
        guard let value = take(.synchronizable) else { return nil }
        if let raw = value as? String, raw == kSecAttrSynchronizableAny as String { return .any }
        guard let flag = Self.boolean(value) else {
            throw KeychainError(.errSecParam, "kSecAttrSynchronizable takes a boolean or kSecAttrSynchronizableAny")
        }
        return flag ? .yes : .no
    }

    private mutating func takeAccessControl() throws(KeychainError) -> AccessControl? {
        guard let value = take(.accessControl) else { return nil }
        guard let accessControl = value as? SecAccessControl else {
            throw KeychainError(
                .errSecParam, "kSecAttrAccessControl takes a SecAccessControl from SecAccessControlCreateWithFlags")
        }
        return accessControl.accessControl
    }

    /// The kSecUse… keys: the context, the prompt, and whether the call may prompt.
    private mutating func takeAuthenticationOptions() throws(KeychainError) -> AuthenticationOptions {
        var options = AuthenticationOptions()
        if let value = take(.useAuthenticationContext) {
            guard let context = value as? LAContext else {
                throw KeychainError(.errSecParam, "kSecUseAuthenticationContext takes an LAContext")
            }
            options.context = context
            if context.interactionNotAllowed { options.interface = .fail }
        }
        if let value = take(.useOperationPrompt) {
            guard let prompt = value as? String else {
                throw KeychainError(.errSecParam, "kSecUseOperationPrompt takes a string")
            }
            options.reason = prompt
        }
        if try takeBool(.useNoAuthenticationUI) == true { options.interface = .fail }
        _ = try takeBool(.useDataProtectionKeychain)
        if let value = take(.useAuthenticationUI) {
            switch value as? String {
            case kSecUseAuthenticationUIAllow?: break
            case kSecUseAuthenticationUIFail?: options.interface = .fail
            case kSecUseAuthenticationUISkip?: options.interface = .skip
            default:
                throw KeychainError(
                    .errSecParam, "kSecUseAuthenticationUI takes kSecUseAuthenticationUIAllow, …Fail or …Skip")
            }
        }
        return options
    }

    private func refuse(
        _ keys: [SecItemOptionKey], in context: String, code: KeychainError = .errSecParam
    ) throws(KeychainError) {
        if let key = keys.first(where: { self[$0] != nil }) {
            let reason = code == .errSecUnimplemented ? "is not supported yet" : "does not belong in \(context)"
            throw KeychainError(code, "\(key.name) \(reason)")
        }
    }

    /// Every remaining key must be an attribute of the class (or a date, for matching); an
    /// option key the call did not take is judged here like any other key.
    private mutating func takeAttributes(of itemClass: ItemClass) throws(KeychainError) -> [String: AttributeValue] {
        for (key, value) in optionValues where optionsLeft & 1 << key.rawValue != 0 { entries[key.name] = value }
        optionsLeft = 0
        var attributes = [String: AttributeValue](minimumCapacity: entries.count)
        for (key, value) in entries {
            let type: AttributeType
            if key == kSecAttrCreationDate as String || key == kSecAttrModificationDate as String {
                type = .date
            } else if let classType = itemClass.attributes[key] {
                type = classType
            } else if key.hasPrefix("v_") || SecItemOptionKey.byName[key]?.isSearchReturnOrUse == true {
                throw KeychainError(.errSecParam, "\(key) does not belong in this call")
            } else {
                throw KeychainError(.errSecNoSuchAttr, "\(key) is not an attribute of \(itemClass.rawValue) items")
            }
            guard let typed = Self.attributeValue(value, type) else {
                throw KeychainError(
                    .errSecParam, "attribute \(key) of a \(itemClass.rawValue) item takes \(type.takes)")
            }
            attributes[key] = typed
        }
        entries.removeAll()
        return attributes
    }

    // MARK: Values

    private mutating func takeString(_ key: SecItemOptionKey) throws(KeychainError) -> String? {
        guard let value = take(key) else { return nil }
        guard let string = value as? String else { throw KeychainError(.errSecParam, "\(key.name) takes a string") }
        return string
    }

    private mutating func takeBool(_ key: SecItemOptionKey) throws(KeychainError) -> Bool? {
        guard let value = take(key) else { return nil }
        guard let flag = Self.boolean(value) else { throw KeychainError(.errSecParam, "\(key.name) takes a boolean") }
        return flag
    }

    private mutating func takeData(_ key: SecItemOptionKey) throws(KeychainError) -> Data? {
        guard let value = take(key) else { return nil }
        if let data = value as? Data { return data }
        if let bytes = value as? [UInt8] { return Data(bytes) }
        throw KeychainError(.errSecParam, "\(key.name) takes Data")
    }

    static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber, number.intValue == 0 || number.intValue == 1 { return number.boolValue }
        return nil
    }

    /// An integer, not a boolean. An `NSNumber` that holds 1 also passes `is Bool` on Linux, so
    /// a boolean is told apart by its encoding (`c`, as `kCFBooleanTrue` and `true as NSNumber`
    /// have), not by a cast.
    static func integer(_ value: Any) -> Int64? {
        if let number = value as? NSNumber {
            return number.objCType.pointee == CChar(UInt8(ascii: "c")) ? nil : number.int64Value
        }
        if let number = value as? any BinaryInteger { return Int64(exactly: number) }
        return nil
    }

    /// `value` in the form Apple's keychain keeps for an attribute of `type` (its `copyBlob`,
    /// `copyNumber` and `copyData`); nil when the type does not take it.
    static func attributeValue(_ value: Any, _ type: AttributeType) -> AttributeValue? {
        switch type {
        case .blob:
            if let string = value as? String { return .string(string) }
            if let data = value as? Data { return .data(data) }
            return integer(value).map(AttributeValue.number)
        case .number:
            if let number = integer(value) { return .number(number) }
            if let flag = value as? Bool { return .number(flag ? 1 : 0) }
            guard let string = value as? String else { return nil }
            // A number only when the string is exactly an Int32's decimal form ("007" stays text).
            if let number = Int32(string), String(number) == string { return .number(Int64(number)) }
            return .string(string)
        case .data:
            if let data = value as? Data { return .data(data) }
            if let string = value as? String { return .data(Data(string.utf8)) }
            guard let number = integer(value).flatMap({ Int32(exactly: $0) }) else { return nil }
            return .data(withUnsafeBytes(of: number) { Data($0) })
        case .string: return (value as? String).map(AttributeValue.string)
        case .bool: return boolean(value).map(AttributeValue.bool)
        case .date: return (value as? Date).map(AttributeValue.date)
        }
    }
}

/// Lets `case kSecMatchLimitOne:` match the string a caller passed.
private func ~= (constant: CFString, value: String) -> Bool {
    constant as String == value
}
