import Foundation

/// The keys of a SecItem dictionary that are not item attributes (class, value, return, match
/// and use keys, and the four attributes every call reads by name: access group,
/// accessibility, synchronizable and access control). ``SecItemDictionary`` sorts a dictionary's
/// entries once, hashing each key once, into these and the rest; reading each of these by name
/// instead cost about 30 `String` hashes a call (callgrind: parsing a one-item query took 26,000
/// of the read's 238,000 instructions, and takes 11,500 so).
enum SecItemOptionKey: Int, CaseIterable {
    case itemClass, valueData, valueRef, valuePersistentRef
    case returnData, returnAttributes, returnRef, returnPersistentRef
    case matchLimit, matchPolicy, matchItemList, matchSearchList, matchIssuers, matchEmailAddressIfPresent
    case matchSubjectContains, matchCaseInsensitive, matchTrustedOnly, matchValidOnDate
    case accessGroup, accessible, synchronizable, accessControl
    case useOperationPrompt, useNoAuthenticationUI, useAuthenticationUI, useAuthenticationContext,
        useDataProtectionKeychain

    /// The `kSec…` constant.
    var constant: CFString {
        switch self {
        case .itemClass: kSecClass
        case .valueData: kSecValueData
        case .valueRef: kSecValueRef
        case .valuePersistentRef: kSecValuePersistentRef
        case .returnData: kSecReturnData
        case .returnAttributes: kSecReturnAttributes
        case .returnRef: kSecReturnRef
        case .returnPersistentRef: kSecReturnPersistentRef
        case .matchLimit: kSecMatchLimit
        case .matchPolicy: kSecMatchPolicy
        case .matchItemList: kSecMatchItemList
        case .matchSearchList: kSecMatchSearchList
        case .matchIssuers: kSecMatchIssuers
        case .matchEmailAddressIfPresent: kSecMatchEmailAddressIfPresent
        case .matchSubjectContains: kSecMatchSubjectContains
        case .matchCaseInsensitive: kSecMatchCaseInsensitive
        case .matchTrustedOnly: kSecMatchTrustedOnly
        case .matchValidOnDate: kSecMatchValidOnDate
        case .accessGroup: kSecAttrAccessGroup
        case .accessible: kSecAttrAccessible
        case .synchronizable: kSecAttrSynchronizable
        case .accessControl: kSecAttrAccessControl
        case .useOperationPrompt: kSecUseOperationPrompt
        case .useNoAuthenticationUI: kSecUseNoAuthenticationUI
        case .useAuthenticationUI: kSecUseAuthenticationUI
        case .useAuthenticationContext: kSecUseAuthenticationContext
        case .useDataProtectionKeychain: kSecUseDataProtectionKeychain
        }
    }

    /// The key as a dictionary spells it.
    var name: String { constant as String }

    /// Every key, by name.
    static let byName: [String: SecItemOptionKey] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// The search keys (`kSecMatch…`).
    static let search: [SecItemOptionKey] = [
        .matchLimit, .matchPolicy, .matchItemList, .matchSearchList, .matchIssuers, .matchEmailAddressIfPresent,
        .matchSubjectContains, .matchCaseInsensitive, .matchTrustedOnly, .matchValidOnDate,
    ]
    /// The search keys this keychain does not implement.
    static let unsupportedSearch: [SecItemOptionKey] = [
        .matchPolicy, .matchSearchList, .matchIssuers, .matchEmailAddressIfPresent, .matchSubjectContains,
        .matchTrustedOnly, .matchValidOnDate,
    ]
    /// The return keys (`kSecReturn…`).
    static let returns: [SecItemOptionKey] = [.returnData, .returnAttributes, .returnRef, .returnPersistentRef]
    /// The use keys (`kSecUse…`).
    static let uses: [SecItemOptionKey] = [
        .useOperationPrompt, .useNoAuthenticationUI, .useAuthenticationUI, .useAuthenticationContext,
        .useDataProtectionKeychain,
    ]

    /// Whether this is a search, return or use key: one that is never an attribute.
    var isSearchReturnOrUse: Bool {
        Self.search.contains(self) || Self.returns.contains(self) || Self.uses.contains(self)
    }
}
