import Enclave
import Foundation
import KeychainProtocol
import KeychainStore

extension KeychainServer {
    /// `SecItemUpdate`: changes every matching item, in one transaction (all or none).
    ///
    /// Each item is opened, changed, and sealed again under its (possibly new) class, group,
    /// synchronizable flag and access control; its identity and creation date stay, its
    /// modification date moves. Updating an item with an access control needs the same
    /// authentication as reading its data, even for attributes only: the Enclave must unwrap the
    /// item to seal it again (Apple's KeychainTouchID sample prompts on update too).
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches, `errSecDuplicateItem` when a change
    ///   makes two items share a primary key, `errSecParam` for read-only attributes,
    ///   `errSecInteractionNotAllowed` when a match is locked.
    func update(_ query: ItemQuery, _ changes: ItemChanges, caller: CallerIdentity) throws(KeychainError) {
        try RequestValidation.checkAttributes(changes.attributes, of: query.itemClass, writing: true)
        try RequestValidation.checkSecret(changes.secret)
        if let group = changes.accessGroup { try RequestValidation.checkMembership(group, caller) }
        let protection = try RequestValidation.protection(changes.accessibility, changes.accessControl)
        let newAccessControl = try protection.constraints.map {
            (control: AccessControl) throws(KeychainError) -> StoredAccessControl in try stored(control)
        }
        let filter = try rowFilter(query, caller: caller, ignoringLimit: true)
        let now = Date()
        // Purged: the replaced ciphertexts leave the write-ahead log before the call returns.
        try store.write(purging: true) { transaction in
            let items = try self.openMatches(query, filter, transaction, limit: .some(nil))
            guard !items.isEmpty else { throw self.notFound(query) }
            for item in items {
                var record = item.record
                if changes.replacesSecretServiceAttributes {
                    record.attributes = record.attributes.filter {
                        !$0.key.hasPrefix(ItemClass.secretServiceAttributePrefix)
                    }
                }
                for (name, value) in changes.attributes { record.attributes[name] = value }
                if let group = changes.accessGroup { record.attributes[CommonAttribute.accessGroup] = .string(group) }
                if let accessibility = protection.accessibility {
                    record.attributes[CommonAttribute.accessible] = .string(accessibility.rawValue)
                }
                if let synchronizable = changes.synchronizable {
                    record.attributes[CommonAttribute.synchronizable] = .bool(synchronizable)
                }
                record.attributes[CommonAttribute.modificationDate] = .date(now)
                guard case .bool(let synchronizable)? = record.attributes[CommonAttribute.synchronizable] else {
                    throw KeychainError(.errSecDecode, "an item's stored attributes are incomplete")
                }
                // A new access control replaces the item's; one without constraints removes it.
                let accessControl = changes.accessControl != nil ? newAccessControl : item.binding.accessControl
                if synchronizable && accessControl != nil {
                    throw KeychainError(.errSecParam, "an item with an access control cannot be synchronizable")
                }
                // The old secret is opened when it is kept, and always for an item with an access
                // control: that is where the Enclave demands the authentication.
                let authenticates = item.binding.accessControl?.control.requiresAuthentication == true
                let current =
                    changes.secret == nil || authenticates ? try self.openSecret(item, query, caller: caller) : nil
                let sealed = try self.seal(
                    record, secret: changes.secret ?? current, itemClass: query.itemClass, identity: item.row.identity,
                    version: item.row.version + 1,
                    accessControl: accessControl, applicationPassword: query.applicationPassword)
                guard let id = item.row.id else { continue }
                try transaction.replace(id, with: sealed.row, attributeHashes: sealed.hashes)
            }
        }
    }

    /// `SecItemDelete`: deletes every matching item (a match limit is ignored, as Apple's
    /// delete acts on all matches).
    ///
    /// A matching row whose attributes no longer open (damaged) is deleted too, so a damaged
    /// item can always be removed (by a query the index matches exactly); a locked match gives
    /// `errSecInteractionNotAllowed`. The deleted rows are gone from the database file and its
    /// write-ahead log before this returns (``KeychainStore/write(purging:_:)``). Returns how
    /// many items were deleted.
    func delete(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> Int {
        let filter = try rowFilter(query, caller: caller, ignoringLimit: true)
        return try store.write(purging: true) { transaction in
            var doomed: [Int64] = []
            for row in try transaction.rows(filter) {
                guard let id = row.id else { continue }
                do {
                    let item = try self.open(row)
                    if item.record.matches(query.attributes, caseInsensitively: query.matchesCaseInsensitively) {
                        doomed.append(id)
                    }
                } catch KeychainError.errSecDecode {
                    // Only a row the index matched on every term: a query compared after
                    // opening selects rows it may not match, and those stay.
                    if !query.matchesAfterOpening { doomed.append(id) }
                }
            }
            guard !doomed.isEmpty else { throw self.notFound(query) }
            try transaction.delete(doomed)
            return doomed.count
        }
    }
}
