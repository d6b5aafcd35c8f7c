import Enclave
import Foundation
import KeychainProtocol
import KeychainStore
import StorageContracts

/// A stored row with its attributes opened.
struct OpenedItem {
    var row: StoredRow
    var record: ItemRecord
    var binding: ItemBinding
}

extension KeychainServer {
    /// `SecItemCopyMatching`.
    ///
    /// Follows iOS: `kSecReturnData` with `kSecMatchLimitAll` is allowed for items without an
    /// access control (macOS refuses it; iOS returns every item's data).
    ///
    /// A query that asks for persistent references alone is answered from the rows' index
    /// columns where every row it selects was opened before (``referenceMatches(_:_:_:)``).
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches, `errSecInteractionNotAllowed` when a
    ///   match is in a locked class, `errSecDecode` when a matching row was tampered with.
    func copyMatching(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> [ItemResult] {
        let filter = try rowFilter(query, caller: caller)
        if query.returns == [.persistentRef] {
            let bindings = try store.read { transaction in try self.referenceMatches(query, filter, transaction) }
            guard !bindings.isEmpty else { throw notFound(query) }
            return bindings.map { binding in
                var result = ItemResult(itemClass: query.itemClass, accessControl: binding.accessControl?.control)
                result.persistentRef = PersistentReference.make(
                    itemClass: query.itemClass, identity: binding.rowIdentity)
                return result
            }
        }
        let items = try store.read { transaction in try self.openMatches(query, filter, transaction) }
        guard !items.isEmpty else { throw notFound(query) }
        guard !query.returns.isEmpty else { return [] }
        var results: [ItemResult] = []
        for item in items {
            var result = ItemResult(itemClass: query.itemClass, accessControl: item.binding.accessControl?.control)
            if query.returns.contains(.attributes) { result.attributes = item.record.attributes }
            if query.returns.contains(.data) {
                // kSecUseAuthenticationUISkip: silently leave out items that need authentication.
                if query.skipsItemsNeedingAuthentication
                    && item.binding.accessControl?.control.requiresAuthentication == true
                {
                    continue
                }
                result.secret = try openSecret(item, query, caller: caller)
            }
            if query.returns.contains(.persistentRef) {
                result.persistentRef = PersistentReference.make(itemClass: query.itemClass, identity: item.row.identity)
            }
            results.append(result)
        }
        guard !results.isEmpty else { throw notFound(query) }
        return results
    }

    /// Opens an item's secret with what the query's authentication context earned on the
    /// caller's connection, and the app password. A biometryCurrentSet item whose enrolled set
    /// changed is refused at once, without a prompt: no authentication
    /// can ever open it again (errSecAuthFailed; Apple's exact code is UNCONFIRMED).
    func openSecret(_ item: OpenedItem, _ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> SecretBytes
    {
        if let accessControl = item.binding.accessControl, accessControl.control.requiresCurrentBiometrySet,
            try biometryStatus().domainState != accessControl.enrolledState
        {
            throw KeychainError(
                .errSecAuthFailed,
                "the enrolled fingers changed since this biometryCurrentSet item was made; it can never be read "
                    + "again: delete it and add it anew"
            )
        }
        let sealed = SealedItem(metadata: item.row.metadata, wrappedKey: item.row.wrappedKey, secret: item.row.secret)
        return try enclave.openSecret(
            sealed, binding: item.binding, grants: contexts.grants(query.authenticationContext, caller: caller),
            applicationPassword: query.applicationPassword)
    }

    /// The store filter for a query: class, the caller's groups, synchronizable, accessibility,
    /// attribute hashes and persistent reference.
    func rowFilter(
        _ query: ItemQuery, caller: CallerIdentity, ignoringLimit: Bool = false
    ) throws(KeychainError) -> RowFilter {
        try RequestValidation.requireImplemented(query.itemClass)
        try RequestValidation.checkAttributes(query.attributes, of: query.itemClass, writing: false)
        if case .count(let n) = query.limit, n < 1 {
            throw KeychainError(
                .errSecParam, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
        }
        let terms = IndexTerms(enclave: enclave)
        var groups: [Data]?
        if let group = query.accessGroup {
            try RequestValidation.checkMembership(group, caller)
            groups = [try terms.accessGroupTag(group)]
        } else if !caller.actsForOwner {
            groups = []
            for group in caller.accessGroups { groups?.append(try terms.accessGroupTag(group)) }
        }
        let synchronizable: Bool? = switch query.synchronizable {
        case .no: false
        case .yes: true
        case .any: nil
        }
        // A query that names the whole primary key in known groups is a unique-index lookup.
        let primaryKeyHashes = try groups.flatMap { (groups: [Data]) throws(KeychainError) -> [Data]? in
            guard query.itemClass.primaryKey.allSatisfy({ query.attributes[$0] != nil }), !query.matchesAfterOpening
            else { return nil }
            var hashes: [Data] = []
            for group in groups {
                for flag in synchronizable.map({ [$0] }) ?? [false, true] {
                    hashes.append(
                        try terms.primaryKeyHash(
                            query.itemClass, groupTag: group, synchronizable: flag,
                            ItemRecord(attributes: query.attributes)))
                }
            }
            return hashes
        }
        var hashes: [Data] = []
        for (name, value) in query.attributes where !RequestValidation.readOnlyAttributes.contains(name) {
            if primaryKeyHashes != nil && query.itemClass.primaryKey.contains(name) { continue }
            // A string compared without case has no one hash; it is compared after opening.
            if query.matchesCaseInsensitively, case .string = value { continue }
            hashes.append(try terms.attributeHash(query.itemClass, name, value))
        }
        // kSecValuePersistentRef and kSecMatchItemList: the item named, among those listed.
        var identities = try query.persistentRef.map { (reference: Data) throws(KeychainError) -> [Data] in
            [try PersistentReference.identity(in: reference, itemClass: query.itemClass)]
        }
        if let list = query.itemList {
            var listed: [Data] = []
            for reference in list {
                listed.append(try PersistentReference.identity(in: reference, itemClass: query.itemClass))
            }
            identities = identities.map { named in named.filter(listed.contains) } ?? listed
        }
        // What is matched after opening would be cut short by the SQL limit.
        return RowFilter(
            itemClass: query.itemClass.rawValue, accessGroupHashes: groups, synchronizable: synchronizable,
            accessibility: query.accessibility?.rawValue, attributeHashes: hashes, primaryKeyHashes: primaryKeyHashes,
            identities: identities,
            limit: ignoringLimit || query.matchesAfterOpening ? nil : query.limit.maximum)
    }

    /// The bindings of the rows a query selects, from their index columns alone when each was
    /// opened before with the identity, version, class, accessibility and access-group tag it
    /// has now, under the class key open now
    /// (``Enclave/openedAttributes(row:identity:version:itemClass:accessibility:accessGroupTag:)``),
    /// and its opened attributes match the query (synchronizable included). So no sealed row is
    /// opened, and no sealed column read, for the references of items read or found before. As
    /// soon as one row was not opened before, or does not match, the rows are opened as any
    /// query's are (the same answer, or the same error for a tampered row), found by the
    /// identities just read rather than by a second search of the index.
    private func referenceMatches(
        _ query: ItemQuery, _ filter: RowFilter, _ transaction: StoreTransaction
    ) throws -> [ItemBinding] {
        let heads = try transaction.heads(filter)
        var bindings: [ItemBinding] = []
        let maximum = query.limit.maximum
        for head in heads {
            guard let accessibility = Accessibility(rawValue: head.accessibility),
                let (binding, record): (ItemBinding, ItemRecord) = try enclave.openedAttributes(
                    row: head.id, identity: head.identity, version: head.version, itemClass: filter.itemClass,
                    accessibility: accessibility, accessGroupTag: head.accessGroupHash),
                filter.synchronizable.map({ $0 == binding.synchronizable }) ?? true,
                record.matches(query.attributes, caseInsensitively: query.matchesCaseInsensitively)
            else {
                var opening = filter
                opening.identities = heads.map(\.identity.data)
                opening.limit = nil
                return try openMatches(query, opening, transaction).map(\.binding)
            }
            bindings.append(binding)
            if let maximum, bindings.count >= maximum { break }
        }
        return bindings
    }

    /// Opens every row the filter selects and keeps those whose opened attributes really match
    /// the query: a tampered index cannot hand out another item.
    func openMatches(
        _ query: ItemQuery, _ filter: RowFilter, _ transaction: StoreTransaction, limit: Int?? = nil
    ) throws -> [OpenedItem] {
        var items: [OpenedItem] = []
        let maximum = limit ?? query.limit.maximum
        for row in try transaction.rows(filter) {
            let item = try open(row)
            guard item.record.matches(query.attributes, caseInsensitively: query.matchesCaseInsensitively) else {
                if !query.matchesAfterOpening {
                    throw KeychainError(
                        .errSecDecode,
                        "the keychain index points a query at an item that does not match it: the database was "
                            + "tampered with"
                    )
                }
                continue
            }
            items.append(item)
            if let maximum, items.count >= maximum { break }
        }
        return items
    }

    /// Opens a row's attributes.
    func open(_ row: StoredRow) throws(KeychainError) -> OpenedItem {
        guard let accessibility = Accessibility(rawValue: row.accessibility) else {
            throw KeychainError(
                .errSecDecode, "a keychain row has an unknown accessibility: the database was tampered with")
        }
        let accessControl = try row.accessControl.map { (bytes: Data) throws(KeychainError) -> StoredAccessControl in
            try StoredAccessControl.decode(bytes)
        }
        let binding = ItemBinding(
            rowIdentity: row.identity, version: row.version, itemClass: row.itemClass, accessibility: accessibility,
            accessGroupTag: row.accessGroupHash, synchronizable: row.synchronizable, accessControl: accessControl)
        let record = try enclave.openAttributes(row.metadata, binding: binding, row: row.id, decode: ItemRecord.decode)
        return OpenedItem(row: row, record: record, binding: binding)
    }

    func notFound(_ query: ItemQuery) -> KeychainError {
        KeychainError(.errSecItemNotFound, "no \(ItemQueryWords.of(query)) that this program can see")
    }
}
