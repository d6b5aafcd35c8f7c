import Enclave
import Foundation
import KeychainProtocol
import KeychainStore
import StorageContracts

/// The Secret Service bridge's searches: answered with addresses (the bridge makes paths of
/// them) and, for the caller's readable items, labels (and for its own, content types), from
/// the rows' index columns where the item was opened before under the class key open now
/// (``RememberedItemAddresses``), and by opening the row where it was not.
extension KeychainServer {
    /// Rows not remembered are opened by identity when at most this many, else by the search.
    static let unrememberedOpenedByIdentity = 256

    /// A search's matches carry content types only when they are at most this many
    /// (``KeychainRequest/searchSecretItemsWithContentTypes(_:)``): the bridge uses them for the
    /// secrets of the few items a lookup finds, and in the answer to a search of thousands they
    /// were a seventh more of keychaind's and the bridge's time, for nothing.
    static let mostMatchesWithContentTypes = 100

    /// `searchSecretItems`: one search of every app's Secret Service items: each match, readable
    /// when it is the caller's own or another app's the owner let the caller read, with its label
    /// when readable (another app's label is not shown before the owner lets the caller read it),
    /// and, `withContentTypes` and for at most ``mostMatchesWithContentTypes`` matches, its
    /// secret's content type when it is the caller's own (the bridge asks for another app's
    /// secret with a request that answers the item's attributes anyway).
    func searchSecretItems(
        _ attributes: [String: AttributeValue], caller: CallerIdentity, withContentTypes: Bool
    ) throws(KeychainError) -> [SecretItemMatch] {
        guard attributes.keys.allSatisfy({ $0 == "svce" || $0.hasPrefix(ItemClass.secretServiceAttributePrefix) })
        else {
            throw KeychainError(.errSecParam, "Secret Service items are searched by Secret Service attributes only")
        }
        let (query, filter) = try secretServiceSearch(attributes, caller: caller)
        let found = try store.read { transaction in try self.secretServiceItems(query, filter, transaction) }
        var granted: Set<SecretServiceItemGrant>?
        let typed = withContentTypes && found.count <= Self.mostMatchesWithContentTypes
        return found.map { item in
            let address = item.address
            let own = caller.accessGroups.contains(address.ownerGroup)
            var readable = own
            if !readable {
                let grants = granted ?? itemGrants(of: caller)
                granted = grants
                readable = grants.contains(address)
            }
            return SecretItemMatch(
                service: address.service, account: address.account, readable: readable,
                label: readable ? item.label : nil, contentType: typed && own ? item.contentType : nil)
        }
    }

    /// What is remembered of every Secret Service item `filter` selects (its address, label and
    /// content type), oldest first, each the entry it is remembered by. A row whose item is
    /// remembered with the row's identity, version and access-group tag, and with every hash the
    /// search asks for, is not opened; a remembered item the index lists for a hash it does not
    /// carry is `errSecDecode` (the index was altered), as opening it would be.
    private func secretServiceItems(
        _ query: ItemQuery, _ filter: RowFilter, _ transaction: StoreTransaction
    ) throws -> [RememberedItemAddresses.Entry] {
        let heads = try transaction.heads(filter)
        guard !heads.isEmpty else { return [] }
        let asked = filter.attributeHashes.map(RememberedItemAddresses.prefix)
        var found = [RememberedItemAddresses.Entry?](repeating: nil, count: heads.count)
        var memories: [String: RememberedItemAddresses] = [:]
        var unremembered: [Int] = []
        var altered = false
        // The few accessibilities, told apart without hashing a string a row.
        var accessibilities: [String] = []
        for head in heads where !accessibilities.contains(head.accessibility) {
            accessibilities.append(head.accessibility)
        }
        for accessibility in accessibilities {
            guard let protection = Accessibility(rawValue: accessibility)?.protectionClass else {
                throw KeychainError(
                    .errSecDecode, "a keychain row has an unknown accessibility: the database was tampered with")
            }
            memories[accessibility] = try enclave.rememberedAddresses(protection)
        }
        for (accessibility, memory) in memories {
            let indices = heads.indices.filter { heads[$0].accessibility == accessibility }
            memory.lookUp(indices.map { heads[$0].id }) { position, entry in
                let index = indices[position]
                let head = heads[index]
                guard let entry, entry.identity == head.identity, entry.version == head.version,
                    entry.accessGroupTag == head.accessGroupHash
                else {
                    unremembered.append(index)
                    return
                }
                if entry.carries(asked) {
                    found[index] = entry
                } else {
                    altered = true
                }
            }
        }
        guard !altered else {
            throw KeychainError(
                .errSecDecode,
                "the keychain index points a query at an item that does not match it: the database was tampered with")
        }
        if !unremembered.isEmpty {
            var opening = filter
            if unremembered.count <= Self.unrememberedOpenedByIdentity {
                opening.identities = unremembered.map { heads[$0].identity.data }
            }
            let position = Dictionary(unremembered.map { (heads[$0].identity, $0) }) { first, _ in first }
            let terms = IndexTerms(enclave: enclave)
            var opened: [String: [(row: Int64, entry: RememberedItemAddresses.Entry)]] = [:]
            for item in try openMatches(query, opening, transaction) {
                // Columns longer than a head holds were refused when the heads were read.
                guard let identity = ColumnBytes(item.row.identity), let index = position[identity],
                    let accessGroupTag = ColumnBytes(item.row.accessGroupHash), let row = item.row.id,
                    let address = Self.secretServiceAddress(item.record.attributes)
                else { continue }
                var label: String?
                if case .string(let text)? = item.record.attributes["labl"] { label = text }
                let contentType = item.record.attributes[ItemClass.secretServiceContentTypeAttribute]?.text
                let entry = RememberedItemAddresses.Entry(
                    identity: identity, version: item.row.version, accessGroupTag: accessGroupTag,
                    attributeHashes: try terms.attributeHashes(.genericPassword, item.record), address: address,
                    label: label, contentType: contentType)
                found[index] = entry
                opened[item.row.accessibility, default: []].append((row, entry))
            }
            for (accessibility, entries) in opened { memories[accessibility]?.remember(entries) }
        }
        return found.compactMap { $0 }
    }

    /// The query and filter of a search of every app's Secret Service items with `attributes`,
    /// made as the owner's (of any group, synchronizable or not) for `caller`'s connection.
    func secretServiceSearch(
        _ attributes: [String: AttributeValue], caller: CallerIdentity
    ) throws(KeychainError) -> (ItemQuery, RowFilter) {
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: attributes, synchronizable: .any, limit: .all,
            returns: .attributes)
        let owner = CallerIdentity(accessGroups: caller.accessGroups, actsForOwner: true, connection: caller.connection)
        return (query, try rowFilter(query, caller: owner))
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
