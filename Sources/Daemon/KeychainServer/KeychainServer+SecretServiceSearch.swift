import Enclave
import Foundation
import KeychainProtocol
import KeychainStore

/// The Secret Service bridge's searches: answered with addresses (the bridge makes paths of
/// them), from the rows' index columns where the item was opened before under the class key
/// open now (``RememberedItemAddresses``), and by opening the row where it was not.
extension KeychainServer {
    /// Rows not remembered are opened by identity when at most this many, else by the search.
    static let unrememberedOpenedByIdentity = 256

    /// `searchSecretItems`: one search of every app's Secret Service items: each match, readable
    /// when it is the caller's own or another app's the owner let the caller read.
    func searchSecretItems(
        _ attributes: [String: AttributeValue], caller: CallerIdentity
    ) throws(KeychainError) -> [SecretItemMatch] {
        guard attributes.keys.allSatisfy({ $0 == "svce" || $0.hasPrefix(ItemClass.secretServiceAttributePrefix) })
        else {
            throw KeychainError(.errSecParam, "Secret Service items are searched by Secret Service attributes only")
        }
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: attributes, synchronizable: .any, limit: .all,
            returns: .attributes)
        let owner = CallerIdentity(accessGroups: caller.accessGroups, actsForOwner: true, connection: caller.connection)
        let filter = try rowFilter(query, caller: owner)
        let addresses = try store.read { transaction in try self.secretServiceAddresses(query, filter, transaction) }
        var granted: Set<SecretServiceItemGrant>?
        return addresses.map { address in
            var readable = caller.accessGroups.contains(address.ownerGroup)
            if !readable {
                let grants = granted ?? itemGrants(of: caller)
                granted = grants
                readable = grants.contains(address)
            }
            return SecretItemMatch(service: address.service, account: address.account, readable: readable)
        }
    }

    /// The address of every Secret Service item `filter` selects, oldest first. A row whose
    /// item is remembered with the row's version and access-group tag, and with every hash the
    /// search asks for, is not opened; a remembered item the index lists for a hash it does not
    /// carry is `errSecDecode` (the index was altered), as opening it would be.
    private func secretServiceAddresses(
        _ query: ItemQuery, _ filter: RowFilter, _ transaction: StoreTransaction
    ) throws -> [SecretServiceItemGrant] {
        let heads = try transaction.heads(filter)
        guard !heads.isEmpty else { return [] }
        var memories: [String: RememberedItemAddresses] = [:]
        var known: [Data: SecretServiceItemGrant] = [:]
        var unremembered: [RowHead] = []
        for (accessibility, classHeads) in Dictionary(grouping: heads, by: \.accessibility) {
            guard let protection = Accessibility(rawValue: accessibility)?.protectionClass else {
                throw KeychainError(
                    .errSecDecode, "a keychain row has an unknown accessibility: the database was tampered with")
            }
            let memory = try enclave.rememberedAddresses(protection)
            memories[accessibility] = memory
            let entries = memory.entries(classHeads.map(\.identity))
            for head in classHeads {
                guard let entry = entries[head.identity], entry.version == head.version,
                    entry.accessGroupTag == head.accessGroupHash
                else {
                    unremembered.append(head)
                    continue
                }
                guard entry.carries(filter.attributeHashes) else {
                    throw KeychainError(
                        .errSecDecode,
                        "the keychain index points a query at an item that does not match it: the database was "
                            + "tampered with")
                }
                known[head.identity] = entry.address
            }
        }
        if !unremembered.isEmpty {
            var opening = filter
            if unremembered.count <= Self.unrememberedOpenedByIdentity { opening.identities = unremembered.map(\.identity) }
            let terms = IndexTerms(enclave: enclave)
            var opened: [String: [(identity: Data, entry: RememberedItemAddresses.Entry)]] = [:]
            for item in try openMatches(query, opening, transaction) where known[item.row.identity] == nil {
                guard let address = Self.secretServiceAddress(item.record.attributes) else { continue }
                known[item.row.identity] = address
                let entry = RememberedItemAddresses.Entry(
                    version: item.row.version, accessGroupTag: item.row.accessGroupHash,
                    attributeHashes: try terms.attributeHashes(.genericPassword, item.record), address: address)
                opened[item.row.accessibility, default: []].append((item.row.identity, entry))
            }
            for (accessibility, entries) in opened { memories[accessibility]?.remember(entries) }
        }
        return heads.compactMap { known[$0.identity] }
    }

    /// The address an item's opened attributes give it; nil for an item that is no Secret
    /// Service item.
    static func secretServiceAddress(_ attributes: [String: AttributeValue]) -> SecretServiceItemGrant? {
        guard case .string(let service)? = attributes["svce"], service.hasPrefix(SecretServiceItemGrant.servicePrefix),
            case .string(let account)? = attributes["acct"],
            case .string(let group)? = attributes[CommonAttribute.accessGroup]
        else { return nil }
        return SecretServiceItemGrant(service: service, account: account, ownerGroup: group)
    }
}
