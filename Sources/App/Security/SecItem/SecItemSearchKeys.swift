// Search, return, value and use keys (SecItem.h), with Apple's raw strings.
/// How many matches to return: `kSecMatchLimitOne` (the default), `kSecMatchLimitAll` or a number.
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// Return the first match only.
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every match, as an array.
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchPolicy: CFString = "m_Policy"
/// Not supported.
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_ItemList"
/// Not supported (macOS keychains).
nonisolated(unsafe) public let kSecMatchSearchList: CFString = "m_SearchList"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchIssuers: CFString = "m_Issuers"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchEmailAddressIfPresent: CFString = "m_EmailAddressIfPresent"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
/// Not supported: matches are exact.
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchTrustedOnly: CFString = "m_TrustedOnly"
/// Not supported (certificates).
nonisolated(unsafe) public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"
/// Return the item's data (`Data`).
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return the item's attributes (`[String: Any]`).
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// Not supported yet: use `kSecReturnPersistentRef`.
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Return a persistent reference (`Data`) that can be stored and used with `kSecValuePersistentRef`.
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// The item's data (`Data`).
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// Not supported yet.
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// A persistent reference: limits a search to that item.
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// The prompt shown when an item needs authentication (deprecated by Apple).
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// Fail with errSecInteractionNotAllowed rather than prompt (deprecated by Apple).
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
/// Whether a call may prompt: `kSecUseAuthenticationUIAllow`, `…Fail` or `…Skip`.
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Prompt when needed (the default).
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail with errSecInteractionNotAllowed when a prompt would be needed.
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Silently skip items that need authentication.
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// A LocalAuthentication context to authenticate with (not supported yet).
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Accepted and ignored: every item here is in the data-protection keychain.
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
