import Crypto
import Enclave
import Foundation
import KeychainProtocol
import KeychainStore

extension KeychainServer {
    /// `SecItemAdd`: seals and stores one item.
    ///
    /// - Throws: `errSecDuplicateItem` when an item with the same composite primary key exists
    ///   in the same access group, `errSecDataTooLarge` over 1 MiB, `errSecNotAvailable` for
    ///   WhenPasscodeSetThisDeviceOnly without a passcode (UNCONFIRMED by Apple; reported by
    ///   developers), `errSecInteractionNotAllowed` when the class is locked,
    ///   `errSecMissingEntitlement` for a group the caller is not in.
    func add(_ item: NewItem, caller: CallerIdentity) throws(KeychainError) -> [ItemResult] {
        try RequestValidation.requireImplemented(item.itemClass)
        try RequestValidation.checkAttributes(item.attributes, of: item.itemClass, writing: true)
        try RequestValidation.checkSecret(item.secret)
        let group = item.accessGroup ?? caller.defaultAccessGroup
        try RequestValidation.checkMembership(group, caller)
        let protection = try RequestValidation.protection(item.accessibility, item.accessControl)
        guard protection.constraints == nil || !item.synchronizable else {
            throw KeychainError(
                .errSecParam, "an item with an access control never leaves this device, so it cannot be synchronizable")
        }
        let accessibility = protection.accessibility ?? .whenUnlocked
        let accessControl = try protection.constraints.map {
            (control: AccessControl) throws(KeychainError) -> StoredAccessControl in try stored(control)
        }

        var record = ItemRecord(attributes: item.attributes)
        for name in item.itemClass.primaryKey where record.attributes[name] == nil {
            if let type = item.itemClass.attributes[name] { record.attributes[name] = type.emptyValue }
        }
        let now = Date()
        // Dates kept from another store may be older, never later than now.
        if let kept = item.keptDates, kept.created > now || kept.modified > now || kept.modified < kept.created {
            throw KeychainError(.errSecParam, "an item's kept dates must be in the past, modified after created")
        }
        record.attributes[CommonAttribute.accessGroup] = .string(group)
        record.attributes[CommonAttribute.accessible] = .string(accessibility.rawValue)
        record.attributes[CommonAttribute.synchronizable] = .bool(item.synchronizable)
        record.attributes[CommonAttribute.creationDate] = .date(item.keptDates?.created ?? now)
        record.attributes[CommonAttribute.modificationDate] = .date(item.keptDates?.modified ?? now)

        // 16 random bytes in one draw (a byte at a time took 16 getrandom calls).
        let identity = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        let row = try seal(
            record, secret: item.secret, itemClass: item.itemClass, identity: identity, version: 1,
            accessControl: accessControl, applicationPassword: item.applicationPassword)
        _ = try store.write { transaction in
            try transaction.insert(row.row, attributeHashes: row.hashes)
        }
        guard !item.returns.isEmpty else { return [] }
        return [
            ItemResult(
                itemClass: item.itemClass, attributes: item.returns.contains(.attributes) ? record.attributes : nil,
                accessControl: protection.constraints,
                secret: item.returns.contains(.data) ? (item.secret ?? SecretBytes([])) : nil,
                persistentRef: item.returns.contains(.persistentRef)
                    ? PersistentReference.make(itemClass: item.itemClass, identity: identity) : nil)
        ]
    }

    /// The stored form of an access control: a biometryCurrentSet item remembers the enrolled
    /// set it was made under.
    ///
    /// - Throws: errSecNotAvailable for biometryCurrentSet with no finger enrolled (Apple: the
    ///   set "must be available and enrolled").
    func stored(_ control: AccessControl) throws(KeychainError) -> StoredAccessControl {
        guard control.requiresCurrentBiometrySet else {
            return StoredAccessControl(control: control, enrolledState: nil)
        }
        guard let enrolled = try biometryStatus().domainState else {
            throw KeychainError(.errSecNotAvailable, "biometryCurrentSet needs an enrolled finger; enroll one first")
        }
        return StoredAccessControl(control: control, enrolledState: enrolled)
    }

    /// Seals a record into row `identity` at `version` (1 for a new item, one more than the
    /// row's at an update), with its index hashes.
    func seal(
        _ record: ItemRecord, secret: SecretBytes?, itemClass: ItemClass, identity: Data, version: Int64,
        accessControl: StoredAccessControl?, applicationPassword: SecretBytes?
    ) throws(KeychainError) -> (row: StoredRow, hashes: [Data]) {
        guard case .string(let group)? = record.attributes[CommonAttribute.accessGroup],
            case .string(let rawAccessibility)? = record.attributes[CommonAttribute.accessible],
            let accessibility = Accessibility(rawValue: rawAccessibility),
            case .bool(let synchronizable)? = record.attributes[CommonAttribute.synchronizable]
        else {
            throw KeychainError(
                .errSecInternalComponent, "an item record lacks its access group, accessibility or synchronizable flag")
        }
        let terms = IndexTerms(enclave: enclave)
        let groupTag = try terms.accessGroupTag(group)
        let binding = ItemBinding(
            rowIdentity: identity, version: version, itemClass: itemClass.rawValue, accessibility: accessibility,
            accessGroupTag: groupTag, synchronizable: synchronizable, accessControl: accessControl)
        let sealed = try enclave.seal(
            attributes: record.encoded(), secret: secret, binding: binding, applicationPassword: applicationPassword)
        let row = StoredRow(
            identity: identity, version: version, itemClass: itemClass.rawValue, accessGroupHash: groupTag,
            synchronizable: synchronizable,
            accessibility: accessibility.rawValue,
            primaryKeyHash: try terms.primaryKeyHash(
                itemClass, groupTag: groupTag, synchronizable: synchronizable, record),
            metadata: sealed.metadata, wrappedKey: sealed.wrappedKey, secret: sealed.secret,
            accessControl: accessControl?.encoded())
        return (row, try terms.attributeHashes(itemClass, record))
    }
}
