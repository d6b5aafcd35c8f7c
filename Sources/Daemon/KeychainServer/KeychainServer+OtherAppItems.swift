import Foundation
import KeychainPrompt
import KeychainProtocol

/// Other apps' Secret Service items: listed as locked by the bridge's searches
/// (``searchSecretItems(_:caller:withContentTypes:)``), read once the owner allows it
/// (``ItemConsentRun``), never changed.
extension KeychainServer {
    /// `readOtherAppSecretItem`: the item the owner let the caller read, with its secret.
    func readOtherAppSecretItem(
        service: String, account: String, caller: CallerIdentity
    ) throws(KeychainError) -> ItemResult {
        let found = try otherAppsSecretServiceItems(
            ["svce": .string(service), "acct": .string(account)], caller: caller)
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
        let found = try otherAppsSecretServiceItems(
            ["svce": .string(service), "acct": .string(account)], caller: caller)
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
    func itemGrants(of caller: CallerIdentity) -> Set<SecretServiceItemGrant> {
        let kept = (try? currentEntitlements())?.itemGrants(forApp: grantHolder(caller)) ?? []
        return kept.union(itemGrantsForConnection.withLock { $0[caller.connection] ?? [] })
    }

    /// The Secret Service items with `attributes` of the apps other than the caller (left out
    /// by the store's search itself), searched as the owner in one read, with the grant the
    /// caller would need for each.
    private func otherAppsSecretServiceItems(
        _ attributes: [String: AttributeValue], caller: CallerIdentity
    ) throws(KeychainError) -> [(attributes: [String: AttributeValue], grant: SecretServiceItemGrant)] {
        let (query, everyApp) = try secretServiceSearch(attributes, caller: caller)
        var filter = everyApp
        let terms = IndexTerms(enclave: enclave)
        for group in caller.accessGroups {
            filter.excludedAccessGroupHashes.append(try terms.accessGroupTag(group))
        }
        let items = try store.read { transaction in try self.openMatches(query, filter, transaction) }
        return items.compactMap { item in
            Self.secretServiceAddress(item.record.attributes).map { (item.record.attributes, $0) }
        }
    }
}
