import Foundation
import KeychainPrompt
import KeychainProtocol

/// The Secret Service bridge's searches, and other apps' items: listed as locked, read once the
/// owner allows it (``ItemConsentRun``), never changed.
extension KeychainServer {
    /// `searchSecretItems`: one search of every app's Secret Service items: each match, readable
    /// when it is the caller's own or another app's the owner let the caller read.
    func searchSecretItems(
        _ attributes: [String: AttributeValue], caller: CallerIdentity
    ) throws(KeychainError) -> [SecretItemMatch] {
        guard attributes.keys.allSatisfy({ $0 == "svce" || $0.hasPrefix(ItemClass.secretServiceAttributePrefix) })
        else {
            throw KeychainError(.errSecParam, "Secret Service items are searched by Secret Service attributes only")
        }
        var granted: Set<SecretServiceItemGrant>?
        return try secretServiceItems(attributes, caller: caller, othersOnly: false).map { match in
            let grant = match.grant
            var readable = caller.accessGroups.contains(grant.ownerGroup)
            if !readable {
                let grants = granted ?? itemGrants(of: caller)
                granted = grants
                readable = grants.contains(grant)
            }
            return SecretItemMatch(service: grant.service, account: grant.account, readable: readable)
        }
    }

    /// `readOtherAppSecretItem`: the item the owner let the caller read, with its secret.
    func readOtherAppSecretItem(
        service: String, account: String, caller: CallerIdentity
    ) throws(KeychainError) -> ItemResult {
        let found = try secretServiceItems(
            ["svce": .string(service), "acct": .string(account)], caller: caller, othersOnly: true)
        guard !found.isEmpty else { throw KeychainError(.errSecItemNotFound, "no other app has item \(account)") }
        let granted = itemGrants(of: caller)
        guard let grant = found.map(\.grant).first(where: granted.contains) else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "item \(account) is another app's, and the owner has not let this app read it (Unlock asks)")
        }
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string(service), "acct": .string(account)],
            accessGroup: grant.ownerGroup, returns: [.data, .attributes])
        guard
            var result = try copyMatching(
                query, caller: CallerIdentity(accessGroups: [grant.ownerGroup], connection: caller.connection)
            ).first
        else { throw KeychainError(.errSecItemNotFound, "no other app has item \(account)") }
        result.attributes = result.attributes?.filter { $0.key != CommonAttribute.accessGroup }
        return result
    }

    /// `allowOtherAppSecretItem`: asks the owner, and keeps the leave for this connection or
    /// in the owner's entitlements.
    func allowOtherAppSecretItem(
        service: String, account: String, _ authentication: OwnerAuthentication, caller: CallerIdentity,
        prompts: (any PromptProvider)?
    ) throws(KeychainError) -> KeychainReply {
        let found = try secretServiceItems(
            ["svce": .string(service), "acct": .string(account)], caller: caller, othersOnly: true)
        guard let (attributes, grant) = found.first else {
            throw KeychainError(.errSecItemNotFound, "no other app has item \(account)")
        }
        if itemGrants(of: caller).contains(grant) { return .biometry(try biometryStatus()) }
        let label: String = if case .string(let text)? = attributes["labl"] { text } else { account }
        let run = ItemConsentRun(
            server: self, authentication: authentication, caller: caller, prompts: prompts ?? NoPrompts(),
            label: label, savedBy: grant.ownerGroup)
        switch try run.run() {
        case .refused(let failure, let message):
            return .authenticationFailed(failure, message: message)
        case .onlyThisTime:
            itemGrantsForConnection.withLock { _ = $0[caller.connection, default: []].insert(grant) }
        case .always:
            try enclave.changeEntitlements(.grant(app: grantHolder(caller), group: grant.entitlement, granted: true))
            forgetEntitlements()
        }
        return .biometry(try biometryStatus())
    }

    /// The app a lasting leave is kept under: its identifier, or its default group where
    /// nothing identified it (the embedded keychain).
    private func grantHolder(_ caller: CallerIdentity) -> String {
        caller.app ?? caller.defaultAccessGroup
    }

    /// The other apps' items `caller` may read: for good, and on this connection.
    private func itemGrants(of caller: CallerIdentity) -> Set<SecretServiceItemGrant> {
        let kept = (try? currentEntitlements())?.itemGrants(forApp: grantHolder(caller)) ?? []
        return kept.union(itemGrantsForConnection.withLock { $0[caller.connection] ?? [] })
    }

    /// The Secret Service items with `attributes`, of every app (with `othersOnly`, of the apps
    /// other than the caller, left out by the store's search itself), searched as the owner in
    /// one read, with the grant another app would need for each.
    private func secretServiceItems(
        _ attributes: [String: AttributeValue], caller: CallerIdentity, othersOnly: Bool
    ) throws(KeychainError) -> [(attributes: [String: AttributeValue], grant: SecretServiceItemGrant)] {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: attributes, synchronizable: .any, limit: .all,
            returns: .attributes)
        let owner = CallerIdentity(accessGroups: caller.accessGroups, actsForOwner: true, connection: caller.connection)
        var filter = try rowFilter(query, caller: owner)
        if othersOnly {
            let terms = IndexTerms(enclave: enclave)
            for group in caller.accessGroups {
                filter.excludedAccessGroupHashes.append(try terms.accessGroupTag(group))
            }
        }
        let items = try store.read { transaction in try self.openMatches(query, filter, transaction) }
        return items.compactMap { item in
            let attributes = item.record.attributes
            guard case .string(let service)? = attributes["svce"],
                service.hasPrefix(SecretServiceItemGrant.servicePrefix),
                case .string(let account)? = attributes["acct"],
                case .string(let group)? = attributes[CommonAttribute.accessGroup]
            else { return nil }
            return (attributes, SecretServiceItemGrant(service: service, account: account, ownerGroup: group))
        }
    }
}
